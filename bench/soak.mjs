// Issue 24, the soak: `npm run bench -- soak [minutes]` (or SOAK_MINUTES; default 10). Not in CI.
// One instance serves every example API of apis/ (but proxy, whose upstream is on the internet) to
// mixed traffic (SOAK_RATE scenarios a second, default 150, on SOAK_WORKERS loops, default 8),
// while every 30 s the greeter example gets a new release or is rolled back to the one before,
// and every 20 s 50 jobs are queued at once on the reports example. Every SOAK_SAMPLE_SECONDS
// (10) it samples the router's and the cells' RSS and open fds, the SQLite files' size and the
// queues, and writes them to bench/soak.csv and bench/soak.svg (SOAK_OUT: another folder).
// It fails (exit 1, a message per problem) when, after the warm-up (a fifth of the run, at least
// 30 s), RSS or fds grew past their bounds (bench/lib/soak-report.mjs: BOUNDS), when the instance
// exited, or when more than 0.1 % of the answers were 5xx or never came.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { progress } from './lib/config.mjs';
import { BENCH_DIR, ROOT, cleanupAll, cleanupOnSignals, interrupted, startAnvil } from './lib/instance.mjs';
import { toCsv, toSvg, verdict } from './lib/soak-report.mjs';
import { sample } from './lib/soak-sample.mjs';
import { deployOrRollback, jobBurst, mixedTraffic, pause, scenarios, soakClient } from './lib/soak-traffic.mjs';

const EXAMPLES = join(ROOT, 'apis');
const LEFT_OUT = new Set(['proxy']);
const DEPLOY_EVERY_MS = 30_000;
const BURST_EVERY_MS = 20_000;
const BURST_JOBS = 50;
const MAX_FAILED_SHARE = 0.001;

function positive(name, raw, fallback) {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not "${raw}"`);
  return value;
}

/** The soak's settings: its argument (minutes) wins over SOAK_MINUTES. */
export function soakSettings(args, env = process.env) {
  const minutes = positive(
    args[0] !== undefined ? 'the soak minutes argument' : 'SOAK_MINUTES',
    args[0] ?? env.SOAK_MINUTES,
    10,
  );
  const seconds = minutes * 60;
  return {
    seconds,
    warmupSeconds: Math.max(30, Math.round(seconds / 5)),
    sampleSeconds: positive('SOAK_SAMPLE_SECONDS', env.SOAK_SAMPLE_SECONDS, 10),
    rate: positive('SOAK_RATE', env.SOAK_RATE, 150),
    workers: Math.round(positive('SOAK_WORKERS', env.SOAK_WORKERS, 8)),
    outDir: env.SOAK_OUT || BENCH_DIR,
  };
}

/** Runs the soak; resolves the exit code (0: flat and healthy). */
export async function soakMain(args) {
  cleanupOnSignals();
  const settings = soakSettings(args);
  try {
    return await soak(settings);
  } finally {
    await cleanupAll();
  }
}

async function soak(settings) {
  const examples = readdirSync(EXAMPLES, { withFileTypes: true }).filter(
    (e) => e.isDirectory() && !LEFT_OUT.has(e.name),
  );
  progress(
    `soak: ${settings.seconds / 60} min, ${examples.length} example APIs, ${settings.rate} scenarios/s on ${settings.workers} loops, warm-up ${settings.warmupSeconds} s`,
  );
  const instance = await startAnvil({
    apis: examples.map((e) => ({ from: join(EXAMPLES, e.name) })),
    readyPath: '/ping/ping',
  });
  const client = soakClient(instance);
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const done = () => interrupted() || instance.isExited() || elapsed() >= settings.seconds;
  const answered = () => [...client.statuses.values()].reduce((a, b) => a + b, 0);

  const samples = [];
  const sampler = (async () => {
    for (let next = settings.sampleSeconds; !done(); next += settings.sampleSeconds) {
      await pause((next - elapsed()) * 1000, done);
      if (instance.isExited()) break;
      const taken = await sample(instance, elapsed(), answered());
      samples.push(taken);
      progress(
        `soak ${taken.seconds} s: router ${taken.routerRssMiB} MiB / ${taken.routerFds} fds, ${taken.cells} cells ${taken.cellsRssMiB} MiB / ${taken.cellsFds} fds, SQLite ${taken.sqliteMiB} MiB, jobs queued ${taken.jobsQueued}, mailbox ${taken.mailbox}, ${taken.requests} answers`,
      );
    }
  })();
  const operator = (async () => {
    let round = 0;
    let nextDeploy = DEPLOY_EVERY_MS;
    let nextBurst = BURST_EVERY_MS;
    while (!done()) {
      await pause(Math.min(nextDeploy, nextBurst) - elapsed() * 1000, done);
      if (done()) break;
      if (elapsed() * 1000 >= nextBurst) {
        await jobBurst(client, BURST_JOBS);
        nextBurst += BURST_EVERY_MS;
      }
      if (elapsed() * 1000 >= nextDeploy) {
        progress(`soak: ${await deployOrRollback(client, round++)}`);
        nextDeploy += DEPLOY_EVERY_MS;
      }
    }
  })();
  await Promise.all([
    mixedTraffic(scenarios(client), { rate: settings.rate, workers: settings.workers, until: done }),
    sampler,
    operator,
  ]);
  await sleep(100);
  await client.close();

  mkdirSync(settings.outDir, { recursive: true });
  const csv = join(settings.outDir, 'soak.csv');
  const svg = join(settings.outDir, 'soak.svg');
  writeFileSync(csv, toCsv(samples));
  writeFileSync(
    svg,
    toSvg(samples, {
      warmupSeconds: settings.warmupSeconds,
      title: `Anvil soak, ${new Date().toISOString().slice(0, 16)}Z, ${Math.round(elapsed())} s`,
    }),
  );
  progress(`soak: wrote ${csv} and ${svg}`);

  const problems = [];
  if (instance.isExited()) problems.push(`the instance exited during the soak:\n${instance.log()}`);
  const { problems: growth, figures } = verdict(samples, settings.warmupSeconds);
  problems.push(...growth);
  const failed = [...client.statuses].filter(([key]) => / (0|5\d\d)$/.test(key)).reduce((sum, [, n]) => sum + n, 0);
  const total = answered();
  if (failed > total * MAX_FAILED_SHARE)
    problems.push(`${failed} of ${total} requests got a 5xx or no answer (more than ${MAX_FAILED_SHARE * 100} %)`);

  for (const f of figures)
    progress(`soak: ${f.name} ${f.from} → ${f.to} ${f.unit} after the warm-up (bound ${f.limit})`);
  progress(
    `soak: answers by kind and status: ${[...client.statuses]
      .sort()
      .map(([key, n]) => `${key}: ${n}`)
      .join(', ')}`,
  );
  const warnings = instance.warnings();
  if (warnings) progress(`soak: the instance logged ${warnings}`);
  if (problems.length === 0) {
    progress(`soak: passed: RSS and fds flat after the warm-up, ${total} answers, ${failed} failed`);
    return 0;
  }
  for (const problem of problems) progress(`soak FAILED: ${problem}`);
  return 1;
}
