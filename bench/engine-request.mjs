// Issue 20: what an actor thread spends on one request of the full flow, without its sockets. The
// flow API is deployed once by a real instance (its compiled release is what a thread loads), then,
// in this process, each request goes through what the thread does with it: the request frame as the
// router encodes it, decoded; ApiEngine.handle with the real built-ins, the real sandbox and SQLite
// database, Log writing its file; the response frame encoded. Ten requests at a time, the event
// loop turning between batches (so Log's timed writes happen as in a thread). Reported: CPU of this
// process per request (every thread: V8's GC threads, libuv's writes), median of BENCH_RUNS rounds
// of BENCH_ENGINE_REQUESTS requests (default 100 000) after as many to warm up.
//
// Not part of `npm run bench` (it measures a part, not the product); run it on its own to compare
// builds of the engine, with far less noise than a saturated instance on a shared VM:
//   npm run build && node bench/engine-request.mjs
import './lib/cell-flags.mjs';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorRuntime } from '../dist/cell/actors/actor-runtime.js';
import { createSandbox } from '../dist/cell/actors/sandbox-setup.js';
import { builtinDirectives } from '../dist/directives/catalogue.js';
import { ApiEngine } from '../dist/engine/api-engine.js';
import { prepareParamChecks } from '../dist/engine/param-check.js';
import { DEFAULT_QUOTAS } from '../dist/shared/quotas/api-quotas.js';
import { decodeRequest, encodeRequestHead, encodeResponse } from '../dist/shared/protocol/requests.js';
import { progress, standalone } from './lib/config.mjs';
import { findFile } from './lib/find-file.mjs';
import { API_KEY, startAnvil } from './lib/instance.mjs';
import { median } from './lib/stats.mjs';
import { fmt } from './lib/targets.mjs';

const PATHS = {
  '/ping': 'full flow — Ping',
  '/custom': 'full flow — custom directive (Pong)',
  '/item/7': 'full flow — DatabaseQuery read',
  '/custom-item/7': 'full flow — the same read by a custom directive (ReadUser)',
};
const AT_ONCE = 10;
const HEADERS = [
  'host',
  'localhost',
  'user-agent',
  'wrk',
  'api-key',
  API_KEY,
  'x-correlation-id',
  'bench-correlation-0001',
];

export async function run(config) {
  const requests = Number(process.env.BENCH_ENGINE_REQUESTS ?? 100_000);
  const { engine, close } = await setUp();
  try {
    const perRun = [];
    for (let r = 0; r < config.runs; r++) {
      const result = {};
      for (const path of Object.keys(PATHS)) {
        await measure(engine, path, requests); // warm-up
        result[path] = await measure(engine, path, requests);
        progress(`engine run ${r + 1}/${config.runs}: ${path} ${fmt(result[path], 2)} µs CPU per request`);
      }
      perRun.push(result);
    }
    const rows = Object.entries(PATHS).map(([path, label]) => [
      label,
      `GET /flow${path}`,
      `${fmt(median(perRun.map((r) => r[path])), 2)} µs`,
    ]);
    return {
      id: 'engine',
      title: "The actor thread's work per request, in-process (bench/engine-request.mjs)",
      tables: [
        {
          caption: `CPU of the process per request, median of ${perRun.length} run(s) of ${fmt(requests)} requests`,
          columns: ['request', 'path', 'CPU per request'],
          rows,
        },
      ],
      perRun: perRun.map(
        (r, i) =>
          `run ${i + 1}: ${Object.keys(PATHS)
            .map((p) => `${p} ${fmt(r[p], 2)} µs`)
            .join(', ')}`,
      ),
    };
  } finally {
    await close();
  }
}

/** The flow API deployed by a real instance; its release loaded here as an actor thread loads it. */
async function setUp() {
  const anvil = await startAnvil({ apis: [{ from: 'flow' }] });
  let compiledFile;
  try {
    compiledFile = findFile(anvil.dataDir, 'compiled.json');
  } finally {
    await anvil.stop();
  }
  if (compiledFile === undefined) throw new Error('the flow API was deployed, but no compiled.json was found');
  const release = JSON.parse(readFileSync(compiledFile, 'utf8'));
  const releaseDir = ['files', '.']
    .map((d) => join(compiledFile, '..', d))
    .find((d) => existsSync(join(d, 'api.yaml')));
  prepareParamChecks(builtinDirectives);
  const dataDir = mkdtempSync(join(tmpdir(), 'anvil-engine-bench-'));
  const limits = { memoryMb: 128, cpuMs: 1000, wallMs: 30_000 };
  const spec = {
    id: 'localhost/dev/flow@bench',
    key: 'flow',
    host: 'localhost',
    env: 'dev',
    release: release.release,
    releaseDir,
    compiledFile,
    dataDir,
    localBaseUrl: 'http://localhost:0',
    sandbox: { maxima: limits },
    quotas: DEFAULT_QUOTAS,
    stores: { dataRoot: dataDir, redisUrl: null, redisPrefix: 'bench', databaseUrl: null },
    egressAllow: null,
    maxJsonDepth: 64,
  };
  const runtime = new ActorRuntime(spec, release, () => {});
  const sandbox = createSandbox(release, limits, (event) => {
    throw new Error(`breach during the benchmark: ${event.message}`);
  });
  const custom = sandbox?.directives() ?? new Map();
  const engine = new ApiEngine(
    release,
    runtime,
    (name) => builtinDirectives.get(name) ?? custom.get(name),
    (event) => {
      throw new Error(`error during the benchmark: ${JSON.stringify(event)}`);
    },
  );
  return {
    engine,
    close: async () => {
      sandbox?.close();
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function measure(engine, path, requests) {
  let last = null;
  const one = (n) => {
    const head = encodeRequestHead(n, {
      id: `bench-${n}`,
      verb: 'GET',
      path,
      rawQuery: '',
      rawHeaders: HEADERS,
      ip: '127.0.0.1',
      hop: 0,
      viaBus: false,
      receivedAt: Date.now(),
      body: null,
    });
    const { number, request } = decodeRequest(head.subarray(5));
    return engine.handle(request, (response) => {
      last = encodeResponse(number, response);
    });
  };
  const before = process.cpuUsage();
  for (let n = 0; n < requests; n += AT_ONCE) {
    const pending = [];
    for (let i = 0; i < AT_ONCE; i++) pending.push(one(n + i));
    await Promise.all(pending);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const used = process.cpuUsage(before);
  // [u32 length][u8 type][u32 number][u16 status]…
  if (last === null || last.readUInt16LE(9) !== 200)
    throw new Error(`GET /flow${path} did not answer 200: ${last?.toString('latin1')}`);
  return (used.user + used.system) / requests;
}

standalone(import.meta.url, run);
