// Issue 20: the CPU each contender spends per request at saturation, by process, and the load
// generator's share. On a machine whose cores the load generator shares, a saturated server serves
// about (cores − the generator's share) ÷ (its own CPU per request): a two-process server beats a
// one-process one only if its processes together spend less CPU per request — whatever it gains by
// running on two cores at once. This measures what the hops cost against that budget: raw node:http,
// the bare socket hop to a worker thread (no Anvil code), Fastify and Anvil on the same endpoints.
//
// Each contender is saturated in turn for BENCH_SECONDS; the CPU of its process tree is read from
// /proc before and after, the generator's from this process's own (autocannon) and its waited-for
// children's (wrk) times.
// Figures are medians over BENCH_RUNS runs.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { progress, standalone } from './lib/config.mjs';
import { processCpuUs } from './lib/cpu.mjs';
import { FLOW_HEADERS, descendants, startAnvil, startServer, tempDir } from './lib/instance.mjs';
import { saturate, saturationTool } from './lib/load.mjs';
import { median } from './lib/stats.mjs';
import { fmt } from './lib/targets.mjs';

const CONTENDERS = [
  { id: 'raw', label: 'raw node:http', server: 'raw', path: '/' },
  {
    id: 'floor-thread',
    label: 'socket hop to a worker thread of a child (the shape alone)',
    server: 'floorThread',
    path: '/',
  },
  { id: 'fastify-ping', label: 'Fastify /ping', server: 'fastify', path: '/ping' },
  { id: 'anvil-ping', label: 'Anvil full flow — Ping', server: 'anvil', path: '/flow/ping' },
  { id: 'fastify-custom', label: 'Fastify /custom (plain function)', server: 'fastify', path: '/custom' },
  { id: 'anvil-custom', label: 'Anvil full flow — custom directive', server: 'anvil', path: '/flow/custom' },
  { id: 'fastify-db', label: 'Fastify /item/7 (SQLite read)', server: 'fastify', path: '/item/7' },
  { id: 'anvil-db', label: 'Anvil full flow — DatabaseQuery read', server: 'anvil', path: '/flow/item/7' },
  {
    id: 'anvil-custom-db',
    label: 'Anvil full flow — ReadUser (custom directive read)',
    server: 'anvil',
    path: '/flow/custom-item/7',
  },
];

/** The server's processes: for Anvil the router and its cells (the deploy worker idles), else the server. */
function processesOf(server) {
  return [
    { role: 'server', pid: server.pid },
    ...descendants(server.pid)
      .filter((pid) => isNode(pid))
      .map((pid) => ({ role: 'child', pid })),
  ];
}

function isNode(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'node';
  } catch {
    return false;
  }
}

async function measure(server, path, seconds, connections) {
  const processes = processesOf(server);
  const before = processes.map((p) => processCpuUs(p.pid));
  const generatorBefore = processCpuUs(process.pid, true);
  const result = await saturate(server.url(path), { seconds, connections, headers: FLOW_HEADERS });
  const generator = (processCpuUs(process.pid, true) - generatorBefore) / result.requests;
  const perProcess = processes
    .map((p, i) => ({ ...p, us: (processCpuUs(p.pid) - before[i]) / result.requests }))
    .filter((p) => p.us >= 0.05);
  const server_ = perProcess.reduce((a, p) => a + p.us, 0);
  return {
    rps: result.rps,
    serverUs: server_,
    firstUs: perProcess[0]?.us ?? 0,
    restUs: server_ - (perProcess[0]?.us ?? 0),
    generatorUs: generator,
  };
}

export async function run(config) {
  const { seconds, runs, connections } = config;
  progress('cpu budget: starting raw node:http, the socket hop, Fastify and Anvil');
  const servers = {
    raw: await startServer('raw-server.mjs'),
    floorThread: await startServer('socket-hop-floor.mjs', { extraArgs: ['--thread'] }),
    fastify: await startServer('fastify-app.mjs', { extraArgs: [tempDir()], readyPath: '/ping' }),
    anvil: await startAnvil({ apis: [{ from: 'flow' }], args: ['--idle-timeout', '10m'] }),
  };
  try {
    for (const c of CONTENDERS)
      await saturate(servers[c.server].url(c.path), {
        seconds: Math.min(2, seconds),
        connections,
        headers: FLOW_HEADERS,
      });
    const perRun = [];
    for (let i = 0; i < runs; i++) {
      const result = {};
      for (const c of CONTENDERS) {
        result[c.id] = await measure(servers[c.server], c.path, seconds, connections);
        progress(
          `cpu budget run ${i + 1}/${runs}: ${c.id} ${fmt(result[c.id].rps)} req/s, ${fmt(result[c.id].serverUs, 1)} µs of server CPU per request`,
        );
      }
      perRun.push(result);
    }
    return summarize(perRun, config);
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
}

function summarize(perRun) {
  const cores = os.availableParallelism();
  const med = (id, key) => median(perRun.map((r) => r[id][key]));
  const rows = CONTENDERS.map((c) => {
    const server = med(c.id, 'serverUs');
    const generator = med(c.id, 'generatorUs');
    const split =
      c.server === 'anvil' || c.server === 'floorThread'
        ? `${fmt(med(c.id, 'firstUs'), 1)} + ${fmt(med(c.id, 'restUs'), 1)}`
        : '';
    return [
      c.label,
      fmt(med(c.id, 'rps')),
      fmt(server, 1),
      split,
      fmt(generator, 1),
      fmt((cores * 1e6) / (server + generator)),
    ];
  });
  const twin = (a, f) => median(perRun.map((r) => r[a].serverUs / r[f].serverUs));
  const floor = median(perRun.map((r) => r['floor-thread'].serverUs / r['fastify-custom'].serverUs));
  return {
    id: 'budget',
    title: '9. CPU per request at saturation (bench/cpu-budget.mjs)',
    tables: [
      {
        caption: `Saturated with ${saturationTool}, ${perRun.length} run(s), medians; CPU of every process of the server (user + system, from /proc), per request served`,
        columns: [
          'contender',
          'req/s',
          'server CPU µs/req',
          'router + cell',
          'load generator µs/req',
          `what ${cores} cores allow at this cost, req/s`,
        ],
        rows,
      },
    ],
    notes: [
      `Anvil's CPU per request ÷ Fastify's, same work: Ping ${fmt(twin('anvil-ping', 'fastify-ping'), 2)}×, custom directive ${fmt(twin('anvil-custom', 'fastify-custom'), 2)}×, ReadUser ${fmt(twin('anvil-custom-db', 'fastify-db'), 2)}×, DatabaseQuery ${fmt(twin('anvil-db', 'fastify-db'), 2)}×.`,
      `The shape alone — node:http, a Unix socket, a worker thread that answers at once, no Anvil code — costs ${fmt(floor, 2)}× what Fastify spends on the whole /custom request. With the load generator on the same cores, a server's saturated throughput is about the last column, and a one-process server's also at most one core's worth (10⁶ ÷ its µs per request): Anvil serves more than Fastify where router and cell together stay under both of Fastify's bounds.`,
    ],
    perRun: perRun.map(
      (r, i) =>
        `run ${i + 1}: ${CONTENDERS.map((c) => `${c.id} ${fmt(r[c.id].rps)} req/s ${fmt(r[c.id].serverUs, 1)} µs`).join(', ')}`,
    ),
  };
}

standalone(import.meta.url, run);
