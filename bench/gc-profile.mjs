// Issue 20's tail probe: where the full flow's p99 at half load goes to garbage collection. Starts
// Anvil with --trace-gc in the router and in every cell (ANVIL_CELL_NODE_FLAGS), loads /flow/ping at
// 50 % of its measured maximum with the open-loop generator, and sums the GC pauses each process
// logged during the measured window: per process and kind, the count, mean and max pause. Not part
// of `npm run bench` (tracing changes what it measures); run it on its own:
//   npm run build && node bench/gc-profile.mjs   (BENCH_SECONDS sets the measured window: twice it)
import { readFileSync, statSync } from 'node:fs';
import { progress, standalone } from './lib/config.mjs';
import { FLOW_HEADERS, cellsOf, startAnvil } from './lib/instance.mjs';
import { openLoop, saturate } from './lib/load.mjs';
import { fmt } from './lib/targets.mjs';

// `[pid:0xisolate]   1234 ms: Scavenge 4.1 (5.2) -> 3.5 (6.2) MB, 0.85 / 0.00 ms  (…) allocation failure;`
const TRACE_LINE =
  /^\[(\d+):(0x[0-9a-f]+)\]\s+\d+ ms: (Scavenge|Mark-Compact(?: \(reduce\))?|Minor Mark-Compact)\b[^,]*, ([\d.]+) \/ [\d.]+ ms.*\)\s*([^()]*)$/;

export async function run(config) {
  const seconds = config.seconds * 2;
  const anvil = await startAnvil({
    apis: [{ from: 'flow' }],
    nodeArgs: ['--trace-gc'],
    env: { ANVIL_CELL_NODE_FLAGS: '--trace-gc' },
    args: ['--idle-timeout', '10m'],
  });
  const url = anvil.url('/flow/ping');
  progress('gc-profile: warm-up and maximum');
  await saturate(url, { seconds: 2, connections: config.connections, headers: FLOW_HEADERS });
  const max = await saturate(url, { seconds: config.seconds, connections: config.connections, headers: FLOW_HEADERS });
  const rate = Math.round(max.rps / 2);
  await openLoop(url, { rate, seconds: 2, connections: config.connections, headers: FLOW_HEADERS });

  progress(`gc-profile: ${rate} req/s for ${seconds} s with --trace-gc`);
  const from = statSync(anvil.logFile).size;
  const load = await openLoop(url, {
    rate,
    seconds,
    warmup: 0,
    connections: config.connections,
    headers: FLOW_HEADERS,
  });
  const trace = readFileSync(anvil.logFile).subarray(from).toString('utf8');

  const names = new Map([[anvil.pid, 'router'], ...cellsOf(anvil).map((c) => [c.pid, `cell ${c.cell}`])]);
  // Isolates are numbered per process in the order they first collect: a cell's actor threads, its
  // main thread and any sandbox isolates each get their own row.
  const isolates = new Map();
  const groups = new Map();
  for (const line of trace.split('\n')) {
    const match = TRACE_LINE.exec(line);
    if (!match) continue;
    const [, pid, isolate, kind, pause, reason] = match;
    const process = names.get(Number(pid)) ?? `pid ${pid}`;
    const numbered = isolates.get(process) ?? new Map();
    isolates.set(process, numbered);
    if (!numbered.has(isolate)) numbered.set(isolate, numbered.size + 1);
    const key = `${process}, isolate ${numbered.get(isolate)} — ${kind}`;
    const group = groups.get(key) ?? { pauses: [], reasons: new Map() };
    group.pauses.push(Number(pause));
    const why = reason.replace(/;\s*$/, '').trim() || 'unknown';
    group.reasons.set(why, (group.reasons.get(why) ?? 0) + 1);
    groups.set(key, group);
  }
  const rows = [...groups]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, g]) => {
      const total = g.pauses.reduce((a, b) => a + b, 0);
      return {
        process: key,
        count: g.pauses.length,
        perSecond: fmt(g.pauses.length / seconds, 1),
        meanMs: fmt(total / g.pauses.length, 2),
        maxMs: fmt(Math.max(...g.pauses), 2),
        totalMs: fmt(total, 1),
        reasons: Object.fromEntries(g.reasons),
      };
    });
  await anvil.stop();
  return { rate, seconds, latency: { p50: load.p50, p99: load.p99, max: load.max, errors: load.errors }, gc: rows };
}

standalone(import.meta.url, run);
