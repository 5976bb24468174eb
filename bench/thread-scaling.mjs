// Not in `npm run bench`: an API on two threads against one (issue 20,
// notes/one-thread-on-two-cores.md). Fresh instances alternate between `--max-threads 2` (the
// default: the second thread starts when the first keeps a core busy, actors/busy-meter.ts) and
// `--max-threads 1`; each is saturated with the load generator on GET /flow/custom and /flow/ping (req/s,
// and the router's and cells' CPU per request from /proc), then loaded at a fixed rate (p99).
// Usage: node bench/thread-scaling.mjs   (BENCH_RUNS rounds, BENCH_SECONDS each; THREAD_RATE req/s, default 12000)
import { progress, readConfig } from './lib/config.mjs';
import { processCpuUs } from './lib/cpu.mjs';
import { FLOW_HEADERS, cleanupAll, descendants, startAnvil } from './lib/instance.mjs';
import { openLoop, saturate } from './lib/load.mjs';
import { median } from './lib/stats.mjs';

const SETTINGS = { 'two threads': ['--max-threads', '2'], 'one thread': ['--max-threads', '1'] };
const PATHS = ['/flow/custom', '/flow/ping'];

async function measure(setting, path, { seconds, connections, rate }) {
  const anvil = await startAnvil({ apis: [{ from: 'flow' }], args: ['--idle-timeout', '10m', ...SETTINGS[setting]] });
  try {
    const url = anvil.url(path);
    await saturate(url, { seconds: 2, connections, headers: FLOW_HEADERS });
    const cells = descendants(anvil.pid);
    const router0 = processCpuUs(anvil.pid);
    const cells0 = cells.reduce((a, pid) => a + processCpuUs(pid), 0);
    const saturated = await saturate(url, { seconds, connections, headers: FLOW_HEADERS });
    const routerUs = (processCpuUs(anvil.pid) - router0) / saturated.requests;
    const cellUs = (cells.reduce((a, pid) => a + processCpuUs(pid), 0) - cells0) / saturated.requests;
    const paced = await openLoop(url, { rate, seconds, headers: FLOW_HEADERS });
    return { rps: saturated.rps, routerUs, cellUs, p99: paced.p99 };
  } finally {
    await cleanupAll();
  }
}

const config = readConfig();
const rate = Number(process.env.THREAD_RATE ?? 12_000);
const results = {};
for (let round = 1; round <= config.runs; round++) {
  for (const path of PATHS) {
    for (const setting of Object.keys(SETTINGS)) {
      const r = await measure(setting, path, { ...config, rate });
      (results[`${path} ${setting}`] ??= []).push(r);
      progress(
        `round ${round}: ${path} ${setting}: ${Math.round(r.rps)} req/s, router ${r.routerUs.toFixed(1)} µs + cells ${r.cellUs.toFixed(1)} µs per request, p99 at ${rate} req/s ${r.p99.toFixed(2)} ms`,
      );
    }
  }
}
for (const [name, runs] of Object.entries(results)) {
  const med = (key) => median(runs.map((r) => r[key]));
  process.stdout.write(
    `${name}: ${Math.round(med('rps'))} req/s, router ${med('routerUs').toFixed(1)} + cells ${med('cellUs').toFixed(1)} µs/request, p99 at ${rate} req/s ${med('p99').toFixed(2)} ms (medians of ${runs.length})\n`,
  );
}
process.exit(0);
