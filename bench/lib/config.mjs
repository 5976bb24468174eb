// The suite's settings (environment) and running one benchmark file on its own.
import { fileURLToPath } from 'node:url';
import { cleanupAll, cleanupOnSignals } from './instance.mjs';

function number(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not "${raw}"`);
  return value;
}

/**
 * BENCH_SECONDS (default 5): length of each measured load; BENCH_RUNS (default 3): runs per figure
 * (medians are reported); BENCH_CONNECTIONS (default 50): connections of the saturating load;
 * BENCH_COLD_SAMPLES (default 50): cold starts per run; BENCH_SANDBOX_CALLS (default 20 000): calls
 * of each directive per run of the sandbox micro-benchmark; BENCH_ONLY: comma-separated benchmark
 * names (throughput, noisy, cold, memory, bus, sandbox, edges, budget, cluster, postgres, edges2, density) to run only those;
 * cluster and postgres need PostgreSQL (PG_ADMIN_URL) and Redis (REDIS_URL).
 */
export function readConfig() {
  return {
    seconds: number('BENCH_SECONDS', 5),
    runs: Math.round(number('BENCH_RUNS', 3)),
    connections: Math.round(number('BENCH_CONNECTIONS', 50)),
    coldSamples: Math.round(number('BENCH_COLD_SAMPLES', 50)),
    sandboxCalls: Math.round(number('BENCH_SANDBOX_CALLS', 20_000)),
    only: (process.env.BENCH_ONLY ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  };
}

/** Progress lines go to stderr, so a benchmark's stdout stays its result. */
export function progress(line) {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

/**
 * When `moduleUrl` is the script node was started with, runs `run(config)` and prints its result
 * as JSON (for running one benchmark on its own: `node bench/cold-start.mjs`).
 */
export function standalone(moduleUrl, run) {
  if (process.argv[1] !== fileURLToPath(moduleUrl)) return;
  cleanupOnSignals();
  run(readConfig())
    .then((result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`))
    .catch((error) => {
      process.stderr.write(`${error.stack ?? error}\n`);
      process.exitCode = 1;
    })
    .finally(() => cleanupAll());
}
