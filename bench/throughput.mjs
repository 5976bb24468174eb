// Issues 7 and 20: throughput and p99 of GET /ping through Anvil's full flow (before:
// PropagateCorrelationId, CheckKey; after: OnError, Log — bench/apis/flow) against a raw node:http
// server answering the same JSON (bench/raw-server.mjs) and a hand-written Fastify app doing the
// same checks and logging (bench/fastify-app.mjs); then the same with a custom directive in the
// sandbox (GET /flow/custom), a database read by the built-in DatabaseQuery (GET /flow/item/7) and
// the same read by a custom directive (GET /flow/custom-item/7, SPEC's ReadUser), against Fastify
// doing the same (a plain function; better-sqlite3). For context also the bare socket hop
// (bench/socket-hop-floor.mjs), the same hop answered by a worker thread of the child (the shape of
// router → cell → actor thread without Anvil's code) and Anvil's Ping without before/after
// (bench/apis/bare).
//
// Each run: every contender saturated in turn (alternating, same order) for BENCH_SECONDS; then,
// at a fixed rate of 50 % of this run's full-flow maximum, the open-loop latency of raw, both
// socket hops, Fastify, Anvil's bare Ping and the full flow. Figures are medians over BENCH_RUNS
// runs; ratios are taken within each run, then their median.
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { progress, standalone } from './lib/config.mjs';
import { cpuSnapshot } from './lib/cpu.mjs';
import { API_KEY, FLOW_HEADERS, cellsOf, get, startAnvil, startServer, tempDir } from './lib/instance.mjs';
import { openLoop, saturate, saturationTool } from './lib/load.mjs';
import { median } from './lib/stats.mjs';
import { checkTarget, fmt, ms, ratio } from './lib/targets.mjs';

/** Contenders of the saturation phase, in the order they run within each run. */
const CONTENDERS = [
  { id: 'raw', label: 'raw node:http (same JSON)', server: 'raw', path: '/' },
  { id: 'floor', label: 'socket hop alone (node:http → Unix socket → child → back)', server: 'floor', path: '/' },
  {
    id: 'floor-thread',
    label: 'socket hop to a worker thread of the child (the shape alone)',
    server: 'floorThread',
    path: '/',
  },
  {
    id: 'fastify-ping',
    label: 'Fastify: key check, correlation id, log line — /ping',
    server: 'fastify',
    path: '/ping',
  },
  { id: 'anvil-bare', label: 'Anvil: Ping alone, no before/after', server: 'anvil', path: '/bare/ping' },
  { id: 'anvil-ping', label: 'Anvil: full flow — Ping', server: 'anvil', path: '/flow/ping' },
  {
    id: 'fastify-custom',
    label: 'Fastify: same checks — plain function (/custom)',
    server: 'fastify',
    path: '/custom',
  },
  {
    id: 'anvil-custom',
    label: 'Anvil: full flow — custom directive in the sandbox',
    server: 'anvil',
    path: '/flow/custom',
  },
  { id: 'fastify-db', label: 'Fastify: same checks — SQLite read (/item/7)', server: 'fastify', path: '/item/7' },
  { id: 'anvil-db', label: 'Anvil: full flow — DatabaseQuery read', server: 'anvil', path: '/flow/item/7' },
  {
    id: 'anvil-custom-db',
    label: 'Anvil: full flow — the same read by a custom directive (ReadUser)',
    server: 'anvil',
    path: '/flow/custom-item/7',
  },
];

/** Each Anvil contender's hand-written Fastify equivalent. */
const FASTIFY_TWIN = {
  'anvil-ping': 'fastify-ping',
  'anvil-custom': 'fastify-custom',
  'anvil-db': 'fastify-db',
  'anvil-custom-db': 'fastify-db',
};

/** Anvil's idle timeout here: far longer than the 30-50 s an API waits between its measurements (see run()). */
const IDLE_TIMEOUT = '10m';

/** Contenders of the fixed-rate phase. */
const PACED = ['raw', 'floor', 'floor-thread', 'fastify-ping', 'anvil-bare', 'anvil-ping'];

const EXPECTED = {
  raw: '{"message":"pong"}',
  floor: '{"message":"pong"}',
  'floor-thread': '{"message":"pong"}',
  'fastify-ping': '{"message":"pong"}',
  'anvil-bare': '{"message":"pong"}',
  'anvil-ping': '{"message":"pong"}',
  'fastify-custom': '{"message":"pong"}',
  'anvil-custom': '{"message":"pong"}',
  'fastify-db': '{"id":7,"name":"item 7","price":10.5}',
  'anvil-db': '{"id":7,"name":"item 7","price":10.5}',
  'anvil-custom-db': '{"id":7,"name":"item 7","price":10.5}',
};

export async function run(config) {
  const { seconds, runs, connections } = config;
  progress('throughput: starting raw node:http, the socket hops, Fastify and Anvil');
  const raw = await startServer('raw-server.mjs');
  const floor = await startServer('socket-hop-floor.mjs');
  const floorThread = await startServer('socket-hop-floor.mjs', { extraArgs: ['--thread'] });
  const fastifyDir = tempDir();
  const fastify = await startServer('fastify-app.mjs', { extraArgs: [fastifyDir], readyPath: '/ping' });
  // Item 1 asks for the steady state. With the default 30 s idle timeout, the 30-50 s each API waits
  // while the other contenders run stopped its threads, and its fixed-rate run began on new ones
  // whose code V8 had not yet optimized: at 16 000 req/s requests waited up to 300 ms for the first
  // 1.2 s, past the 1 s warm-up. A cold pool is what section 4 measures; here threads stay.
  const anvil = await startAnvil({
    apis: [{ from: 'flow' }, { from: 'bare' }],
    args: ['--idle-timeout', IDLE_TIMEOUT],
  });
  const servers = { raw, floor, floorThread, fastify, anvil };
  const urlOf = (c) => servers[c.server].url(c.path);
  const byId = Object.fromEntries(CONTENDERS.map((c) => [c.id, c]));

  try {
    // Each contender answers what it should, with the correlation id; without the key 401.
    for (const c of CONTENDERS) {
      const reply = await get(servers[c.server].port, c.path, { headers: FLOW_HEADERS });
      if (reply.status !== 200 || reply.body !== EXPECTED[c.id])
        throw new Error(`${c.label}: GET ${c.path} answered ${reply.status} ${reply.body}`);
      if (c.server === 'fastify' || c.path.startsWith('/flow/')) {
        if (!/^x-correlation-id: bench-correlation-0001$/im.test(reply.head))
          throw new Error(`${c.label}: the correlation id was not propagated:\n${reply.head}`);
      }
    }
    for (const [server, path] of [
      ['anvil', '/flow/ping'],
      ['fastify', '/ping'],
    ]) {
      const refused = await get(servers[server].port, path, { headers: { 'api-key': `${API_KEY}-wrong` } });
      if (refused.status !== 401 || refused.body !== '{"error":"Unauthorized"}')
        throw new Error(`${server} ${path} with a wrong key answered ${refused.status} ${refused.body}`);
    }

    // Warm-up: Anvil's threads started (both of each API), JIT warm everywhere. Then the fixed-rate
    // contenders once at the fixed rate: the open loop's connections, new to a server that has only
    // seen wrk's, made V8 throw away much of node:http's optimized code (deopts "wrong map"); until it
    // was optimized again (1-2 s) a fresh Anvil router fell behind at 20 000 req/s, p99 120-330 ms
    // in the first such run and 3-5 ms in the next.
    progress('throughput: warm-up');
    const warm = {};
    for (const c of CONTENDERS)
      warm[c.id] = await saturate(urlOf(c), { seconds: Math.min(2, seconds), connections, headers: FLOW_HEADERS });
    const warmRate = Math.max(100, Math.round(warm['anvil-ping'].rps / 2));
    for (const id of PACED)
      await openLoop(urlOf(byId[id]), {
        rate: warmRate,
        seconds: Math.min(2, seconds),
        connections,
        headers: FLOW_HEADERS,
      });

    const perRun = [];
    let cpu = '';
    for (let i = 0; i < runs; i++) {
      const result = { max: {}, paced: {} };
      for (const c of CONTENDERS) {
        const snapshot =
          i === 0 && c.id === 'anvil-ping'
            ? cpuSnapshot(
                [
                  { label: 'router', pid: anvil.pid },
                  ...cellsOf(anvil).map((cell) => ({ label: `cell ${cell.cell}`, pid: cell.pid })),
                ],
                Math.max(0.5, seconds / 2),
              )
            : null;
        result.max[c.id] = await saturate(urlOf(c), { seconds, connections, headers: FLOW_HEADERS });
        if (snapshot) cpu = await snapshot;
        progress(
          `throughput run ${i + 1}/${runs}: ${c.id} ${fmt(result.max[c.id].rps)} req/s, p99 ${fmt(result.max[c.id].p99, 2)} ms, errors ${result.max[c.id].errors}`,
        );
      }
      const rate = Math.max(100, Math.round(result.max['anvil-ping'].rps / 2));
      result.rate = rate;
      for (const id of PACED) {
        result.paced[id] = await openLoop(urlOf(byId[id]), { rate, seconds, connections, headers: FLOW_HEADERS });
        progress(
          `throughput run ${i + 1}/${runs}: ${id} at ${rate} req/s: p50 ${fmt(result.paced[id].p50, 2)} ms, p99 ${fmt(result.paced[id].p99, 2)} ms, errors ${result.paced[id].errors}`,
        );
      }
      perRun.push(result);
    }

    const logLines = {
      anvil: await countLines(join(anvil.dataDir, 'localhost', 'dev', 'flow', 'logs')),
      fastify: await countLines(join(fastifyDir, 'logs')),
    };
    return summarize(perRun, { cpu, logLines, warnings: anvil.warnings(), config });
  } finally {
    for (const s of [anvil, fastify, floorThread, floor, raw]) await s.stop();
  }
}

/** Number of lines in the .jsonl files of a folder. */
async function countLines(dir) {
  let lines = 0;
  let files = [];
  try {
    files = (await readdir(dir)).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return 0;
  }
  for (const file of files) {
    for await (const chunk of createReadStream(join(dir, file))) {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
    }
  }
  return lines;
}

function summarize(perRun, { cpu, logLines, warnings, config }) {
  const med = (f) => median(perRun.map(f));
  const max = (id, field) => med((r) => r.max[id][field]);
  const within = (a, b) => med((r) => r.max[a].rps / r.max[b].rps);
  const errors = (id) => perRun.reduce((n, r) => n + r.max[id].errors, 0);

  const rows = CONTENDERS.map((c) => [
    c.label,
    fmt(max(c.id, 'rps')),
    ratio(within(c.id, 'raw')),
    FASTIFY_TWIN[c.id] === undefined ? '' : ratio(within(c.id, FASTIFY_TWIN[c.id])),
    ms(max(c.id, 'p50')),
    ms(max(c.id, 'p99')),
    String(errors(c.id)),
  ]);

  const rate = med((r) => r.rate);
  const paced = (id, field) => med((r) => r.paced[id][field]);
  const pacedRows = PACED.map((id) => [
    byId(id).label,
    fmt(paced(id, 'rate')),
    ms(paced(id, 'p50')),
    ms(paced(id, 'p90')),
    ms(paced(id, 'p99')),
    ms(paced(id, 'max')),
    String(perRun.reduce((n, r) => n + r.paced[id].errors, 0)),
  ]);
  const addedP99 = med((r) => r.paced['anvil-ping'].p99 - r.paced.raw.p99);
  const addedP99Fastify = med((r) => r.paced['anvil-ping'].p99 - r.paced['fastify-ping'].p99);
  const addedP50 = med((r) => r.paced['anvil-ping'].p50 - r.paced.raw.p50);
  const hopAddedP99 = med((r) => r.paced.floor.p99 - r.paced.raw.p99);
  const shapeAddedP99 = med((r) => r.paced['floor-thread'].p99 - r.paced.raw.p99);
  const bareAddedP99 = med((r) => r.paced['anvil-bare'].p99 - r.paced.raw.p99);
  const overShapeP99 = med((r) => r.paced['anvil-ping'].p99 - r.paced['floor-thread'].p99);

  const anvilRequests = perRun.reduce(
    (n, r) =>
      n + ['anvil-ping', 'anvil-custom', 'anvil-db', 'anvil-custom-db'].reduce((m, id) => m + r.max[id].requests, 0),
    0,
  );
  const notes = [
    `Load: ${saturationTool === 'wrk' ? `wrk -t1 -c${config.connections} -d${config.seconds}s --latency` : `autocannon, ${config.connections} connections, ${config.seconds} s`} per contender and run (closed loop: the p50/p99 of this table are at saturation). Every request carries \`api-key\` and \`x-correlation-id\` (also to raw node:http, which ignores them).`,
    `Fixed rate: ${fmt(rate)} req/s = 50 % of each run's full-flow maximum, open loop (bench/lib/load.mjs) over ${config.connections} keep-alive connections, ${config.seconds} s after 1 s of warm-up; latency from when a request fell due, so time spent waiting for a free connection counts.`,
    `Added p99 at that rate: full flow − raw node:http ${ms(addedP99)} (p50 ${ms(addedP50)}); full flow − the socket hop to a worker thread (the shape's floor) ${ms(overShapeP99)}; full flow − Fastify ${ms(addedP99Fastify)}; Anvil's bare Ping − raw ${ms(bareAddedP99)}; the socket hop alone (a child process answering at once, no Anvil code) − raw ${ms(hopAddedP99)}; the same hop answered by a worker thread of the child − raw ${ms(shapeAddedP99)}.`,
    `Anvil runs with \`--idle-timeout ${IDLE_TIMEOUT}\`: its threads stay up between contenders, so each measurement is of warm threads (a cold pool is section 4).`,
    `Log lines in the log folders after the runs (warm-up included): Anvil ${fmt(logLines.anvil)} for ${fmt(anvilRequests)} measured full-flow requests (Anvil keeps at most 256 MiB of request logs per API: older files were removed as the runs went); Fastify ${fmt(logLines.fastify)}.`,
    `CPU during the first run's full-flow saturation (100 % = one core): ${cpu}.`,
  ];
  if (warnings) notes.push(`Anvil's log: ${warnings}.`);

  const targets = [
    checkTarget({
      name: 'full-flow /ping throughput ÷ raw node:http',
      measured: within('anvil-ping', 'raw'),
      op: '>=',
      limit: 0.5,
      format: ratio,
    }),
    checkTarget({
      name: 'full-flow /ping throughput ÷ Fastify equivalent',
      measured: within('anvil-ping', 'fastify-ping'),
      op: '>=',
      limit: 0.55,
      format: ratio,
    }),
    checkTarget({
      name: "p99 at 50 % of max load over the shape's floor (full flow − socket hop to a worker thread, same rate)",
      measured: overShapeP99,
      op: '<',
      limit: 1,
      format: ms,
    }),
    checkTarget({
      name: 'full flow with a custom directive ÷ full flow with Ping (throughput)',
      measured: within('anvil-custom', 'anvil-ping'),
      op: '>=',
      limit: 0.5,
      format: ratio,
    }),
    checkTarget({
      name: 'custom directive db read (ReadUser) ÷ built-in DatabaseQuery read (throughput)',
      measured: within('anvil-custom-db', 'anvil-db'),
      op: '>=',
      limit: 0.5,
      format: ratio,
    }),
    checkTarget({
      name: 'full flow with a custom directive ÷ Fastify plain function',
      measured: within('anvil-custom', 'fastify-custom'),
      op: '>=',
      limit: 1,
      format: ratio,
    }),
    checkTarget({
      name: 'custom directive db read ÷ Fastify SQLite read',
      measured: within('anvil-custom-db', 'fastify-db'),
      op: '>=',
      limit: 1,
      format: ratio,
    }),
  ];

  return {
    id: 'throughput',
    title: '1–2. Throughput and latency: full flow vs raw node:http vs Fastify',
    tables: [
      {
        caption: `Saturation (median of ${perRun.length} runs; ratios taken within each run)`,
        columns: ['contender', 'req/s', '× raw', '× Fastify equivalent', 'p50 at max', 'p99 at max', 'errors'],
        rows,
      },
      {
        caption: `Fixed rate, 50 % of the full flow's maximum (median of ${perRun.length} runs)`,
        columns: ['contender', 'achieved req/s', 'p50', 'p90', 'p99', 'max', 'errors'],
        rows: pacedRows,
      },
    ],
    targets,
    notes,
    perRun: perRun.map(
      (r, i) =>
        `run ${i + 1}: ${CONTENDERS.map((c) => `${c.id} ${fmt(r.max[c.id].rps)}`).join(', ')}; at ${fmt(r.rate)} req/s p99 ${PACED.map((id) => `${id} ${fmt(r.paced[id].p99, 2)}`).join(', ')} ms`,
    ),
  };
}

function byId(id) {
  return CONTENDERS.find((c) => c.id === id);
}

standalone(import.meta.url, run);
