// `npm run bench`: runs the benchmarks (issues 7, 20 and 21) one after the other and writes bench/RESULTS.md.
// Settings (environment): BENCH_SECONDS (5), BENCH_RUNS (3), BENCH_CONNECTIONS (50),
// BENCH_COLD_SAMPLES (50), BENCH_ONLY (e.g. "throughput,bus"). A quick smoke run:
//   BENCH_SECONDS=1 BENCH_RUNS=1 npm run bench
// Each benchmark file also runs on its own and prints its result as JSON: node bench/memory.mjs
// The soak (issue 24, not in CI): npm run bench -- soak [minutes]   (see bench/soak.mjs)
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { run as busVsHttp } from './bus-vs-http.mjs';
import { run as cluster } from './cluster-deploy.mjs';
import { run as coldStart } from './cold-start.mjs';
import { run as cpuBudget } from './cpu-budget.mjs';
import { run as density } from './density.mjs';
import { run as edges } from './edges.mjs';
import { run as edgesTenants } from './edges-tenants.mjs';
import { progress, readConfig } from './lib/config.mjs';
import { ROOT, cleanupAll, cleanupOnSignals, interrupted } from './lib/instance.mjs';
import { run as memory } from './memory.mjs';
import { run as noisyNeighbour } from './noisy-neighbour.mjs';
import { run as postgresMode } from './postgres-mode.mjs';
import { machineFacts, writeReport } from './report.mjs';
import { run as sandboxCall } from './sandbox-call.mjs';
import { run as throughput } from './throughput.mjs';

const BENCHMARKS = [
  { name: 'throughput', title: '1–2. Throughput and latency: full flow vs raw node:http vs Fastify', run: throughput },
  { name: 'noisy', title: '3. Noisy neighbour', run: noisyNeighbour },
  { name: 'cold', title: '4. Cold start', run: coldStart },
  { name: 'memory', title: '5. Memory', run: memory },
  { name: 'bus', title: '6. Inter-API Pull: bus vs loopback HTTP', run: busVsHttp },
  { name: 'sandbox', title: '7. One custom directive call (bench/sandbox-call.mjs)', run: sandboxCall },
  { name: 'edges', title: '8. Edges: a neighbour while another tenant deploys hostile files', run: edges },
  { name: 'budget', title: '9. CPU per request at saturation', run: cpuBudget },
  { name: 'cluster', title: '10. Cluster: deploy-to-live across three instances (issue 23)', run: cluster },
  {
    name: 'postgres',
    title: '11. An API on `database: postgres` against the same API on SQLite (issue 23)',
    run: postgresMode,
  },
  {
    name: 'edges2',
    title: '12. Edges II: what one tenant makes the host spend, bounded (issue 41)',
    run: edgesTenants,
  },
  { name: 'density', title: '13. Density: many tenants at once (issue 42)', run: density },
];

if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) {
  process.stderr.write('bench: dist/ is missing; run `npm run build` first (npm run bench does)\n');
  process.exit(1);
}

// `npm run bench -- soak [minutes]`: the long soak of issue 24 instead of the benchmarks (bench/soak.mjs).
if (process.argv[2] === 'soak') {
  const { soakMain } = await import('./soak.mjs');
  process.exit(await soakMain(process.argv.slice(3)));
}

cleanupOnSignals();
const config = readConfig();
const unknown = config.only.filter((name) => !BENCHMARKS.some((b) => b.name === name));
if (unknown.length) {
  process.stderr.write(
    `bench: unknown BENCH_ONLY names: ${unknown.join(', ')} (known: ${BENCHMARKS.map((b) => b.name).join(', ')})\n`,
  );
  process.exit(2);
}
const facts = machineFacts();
const started = performance.now();
const sections = [];
let failed = 0;
for (const benchmark of BENCHMARKS) {
  if (interrupted()) break;
  if (config.only.length && !config.only.includes(benchmark.name)) continue;
  progress(`── ${benchmark.title}`);
  try {
    sections.push(await benchmark.run(config));
  } catch (error) {
    failed++;
    progress(`${benchmark.name} failed: ${error.stack ?? error}`);
    sections.push({ id: benchmark.name, title: benchmark.title, error: String(error.stack ?? error) });
  } finally {
    await cleanupAll();
  }
}
if (interrupted()) await new Promise(() => {}); // the signal handler exits once cleaned up; RESULTS.md stays as it was
const file = writeReport(sections, { facts, config, seconds: (performance.now() - started) / 1000 });
progress(`wrote ${file}${failed ? ` (${failed} benchmark(s) failed)` : ''}`);
process.exitCode = failed ? 1 : 0;
