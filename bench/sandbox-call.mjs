// Issue 20: what one custom directive call costs, measured through the real Sandbox class (the one
// an actor thread uses, with the real built-ins and the API's real SQLite database), without HTTP.
// Each directive is called BENCH_SANDBOX_CALLS times in a row (after as many again to warm up), each
// call with a request context of its own (the time to make those is measured alone and subtracted);
// reported per call: wall time, the CPU of this process (every thread), and the isolate's own CPU
// time (what /anvil/metrics histograms).
//
//   node bench/sandbox-call.mjs            prints the table, and the result as JSON on stdout
import './lib/cell-flags.mjs';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ActorRuntime } from '../dist/cell/actors/actor-runtime.js';
import { createSandbox } from '../dist/cell/actors/sandbox-setup.js';
import { compileDirective } from '../dist/deploy/api-yaml/compile-directive.js';
import { builtinDirectives } from '../dist/directives/catalogue.js';
import { Message } from '../dist/engine/message.js';
import { RequestContext } from '../dist/engine/request-context.js';
import { progress, standalone } from './lib/config.mjs';
import { median } from './lib/stats.mjs';
import { checkTarget, fmt } from './lib/targets.mjs';

const DIRECTIVES = {
  Trivial: { label: 'trivial: returns at once, no state operation', code: 'export default function Trivial() {}' },
  Pong: {
    label: "sets the body (one state operation): the throughput bench's /flow/custom",
    code: "export default function Pong(state) { state.message.body = { message: 'pong' }; }",
  },
  ReadUser: {
    label: "SPEC's ReadUser: db.get by id, then memory.set",
    code: `export default function ReadUser(state, config) {
  const user = state.db.get('SELECT id, name, price FROM items WHERE id = ?', [config.id]);
  if (!user) state.fail(404, 'user not found');
  state.memory.set('user', user);
}`,
    config: { id: '7' },
  },
  Compose: {
    label: "awaits one built-in: await state.run('ModifyMessage', …)",
    code: "export default async function Compose(state) { await state.run('ModifyMessage', { status: 201 }); }",
  },
};

/** Built-ins doing the same, for comparison (no sandbox). */
const BUILTINS = {
  DatabaseQuery: {
    label: "for comparison, the built-in DatabaseQuery doing ReadUser's read (no sandbox)",
    config: { sql: 'SELECT id, name, price FROM items WHERE id = ?', params: ['7'], mode: 'get', target: 'user' },
  },
};

const TARGET_US = 20;

export async function run(config) {
  const { sandboxCalls: calls, runs } = config;
  const root = mkdtempSync(join(tmpdir(), 'anvil-sandbox-bench-'));
  try {
    const { sandbox, runtime } = await setUp(root);
    const perRun = [];
    for (let r = 0; r < runs; r++) {
      const result = {};
      for (const [name, d] of Object.entries({ ...DIRECTIVES, ...BUILTINS })) {
        await measure(sandbox, runtime, name, d.config ?? {}, calls); // warm-up: the JIT, the module, the statement cache
        result[name] = await measure(sandbox, runtime, name, d.config ?? {}, calls);
        progress(
          `sandbox run ${r + 1}/${runs}: ${name} ${fmt(result[name].cpuUs, 1)} µs CPU per call (isolate ${fmt(result[name].isolateUs, 1)} µs, wall ${fmt(result[name].wallUs, 1)} µs)`,
        );
      }
      perRun.push(result);
    }
    sandbox.close();
    await runtime.close();
    return summarize(perRun, calls);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function setUp(root) {
  const releaseDir = join(root, 'release');
  const dataDir = join(root, 'data');
  mkdirSync(join(releaseDir, 'Assets', 'db'), { recursive: true });
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(
    join(releaseDir, 'Assets', 'db', '001-items.sql'),
    "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL);\nINSERT INTO items VALUES (7, 'item 7', 10.5);\n",
  );
  const directiveCode = {};
  for (const [name, d] of Object.entries(DIRECTIVES)) {
    const compiled = await compileDirective(`Directives/${name}.js`, d.code);
    if (!compiled.ok) throw new Error(`${name}: ${JSON.stringify(compiled.errors)}`);
    directiveCode[name] = compiled.code;
  }
  const release = {
    key: 'bench',
    release: 'r-bench',
    maps: {},
    definition: { debug: false, limits: {} },
    directiveCode,
  };
  const spec = {
    key: 'bench',
    host: 'localhost',
    env: 'dev',
    release: 'r-bench',
    dataDir,
    releaseDir,
    localBaseUrl: 'http://localhost:0',
    egressAllow: null,
    stores: { dataRoot: root, redisUrl: null, redisPrefix: 'bench' },
  };
  const limits = { memoryMb: 256, cpuMs: 1000, wallMs: 30_000 };
  spec.sandbox = { maxima: limits };
  const runtime = new ActorRuntime(spec, release, () => {});
  const sandbox = createSandbox(release, limits, (event) => {
    throw new Error(`breach during the benchmark: ${event.message}`);
  });
  return { sandbox, runtime };
}

function context(runtime) {
  const request = { verb: 'GET', path: '/item/7', rawQuery: '', rawHeaders: ['host', 'localhost'], body: null };
  const facts = {
    id: 'bench',
    ip: '127.0.0.1',
    hop: 0,
    viaBus: false,
    receivedAt: 0,
    definitionVerb: 'get',
    definitionPath: '/item/{id}',
    verb: 'GET',
    path: '/item/7',
    query: '',
    headers: request.rawHeaders,
    job: false,
  };
  return new RequestContext(new Message(request), runtime, facts, { id: '7' });
}

async function measure(sandbox, runtime, name, config, calls) {
  const builtin = builtinDirectives.get(name);
  const directive = BUILTINS[name] !== undefined ? builtin : sandbox.directives().get(name);
  // Making a request's context is not the call's cost: it is timed alone, then subtracted.
  const alone = timed(calls, () => context(runtime));
  sandbox.takeCpu();
  let last = null;
  const withCall = await timedAsync(calls, async () => {
    last = context(runtime);
    const pending = directive.run(last, config);
    if (pending !== undefined) await pending;
  });
  const [, count, seconds] = sandbox.takeCpu()?.find(([directiveName]) => directiveName === name) ?? [name, calls, NaN];
  if (count !== calls) throw new Error(`${name}: ${count} calls counted, ${calls} made`);
  if ((name === 'ReadUser' || name === 'DatabaseQuery') && last.memory.get('user')?.name !== 'item 7')
    throw new Error(`ReadUser stored ${JSON.stringify(last.memory.get('user'))}`);
  if (name === 'Pong' && last.message.bodyText() !== '{"message":"pong"}')
    throw new Error(`Pong set ${last.message.bodyText()}`);
  return {
    wallUs: withCall.wallUs - alone.wallUs,
    cpuUs: withCall.cpuUs - alone.cpuUs,
    isolateUs: (seconds / calls) * 1e6,
  };
}

function timed(times, work) {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < times; i++) work();
  return per(times, started, cpuBefore);
}

async function timedAsync(times, work) {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < times; i++) await work();
  return per(times, started, cpuBefore);
}

function per(times, started, cpuBefore) {
  const cpu = process.cpuUsage(cpuBefore);
  return { wallUs: ((performance.now() - started) * 1000) / times, cpuUs: (cpu.user + cpu.system) / times };
}

function summarize(perRun, calls) {
  const med = (name, field) => median(perRun.map((r) => r[name][field]));
  return {
    id: 'sandbox',
    title: '7. One custom directive call (bench/sandbox-call.mjs)',
    tables: [
      {
        caption: `Per call, through the real Sandbox class, no HTTP (median of ${perRun.length} runs of ${fmt(calls)} calls each)`,
        columns: ['directive', 'CPU of the process', 'of which in the isolate', 'wall'],
        rows: Object.entries({ ...DIRECTIVES, ...BUILTINS }).map(([name, d]) => [
          `${name}: ${d.label}`,
          `${fmt(med(name, 'cpuUs'), 1)} µs`,
          BUILTINS[name] !== undefined ? '' : `${fmt(med(name, 'isolateUs'), 1)} µs`,
          `${fmt(med(name, 'wallUs'), 1)} µs`,
        ]),
      },
    ],
    targets: [
      checkTarget({
        name: 'CPU of one trivial custom directive call',
        measured: med('Trivial', 'cpuUs'),
        op: '<=',
        limit: TARGET_US,
        format: (v) => `${fmt(v, 1)} µs`,
      }),
    ],
    notes: [
      "CPU of the process: user + system time of the whole process (every thread, V8's GC threads included) divided by the calls; the isolate's CPU time is the part spent running in the isolate (its own clock, as `anvil_sandbox_cpu_seconds` reports it).",
      'Each call gets a request context of its own, as each request does; making those is timed alone and subtracted. Module loading and the first compilation are in the warm-up.',
    ],
    perRun: perRun.map(
      (r, i) =>
        `run ${i + 1}: ${Object.keys({ ...DIRECTIVES, ...BUILTINS })
          .map((name) => `${name} ${fmt(r[name].cpuUs, 1)} µs CPU / ${fmt(r[name].wallUs, 1)} µs wall`)
          .join(', ')}`,
    ),
  };
}

standalone(import.meta.url, run);
