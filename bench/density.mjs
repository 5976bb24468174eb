// Issue 42: many tenants at once. N copies of bench/apis/pong (one endpoint, a custom directive that
// answers {"message":"pong"}) all receiving traffic together — each request to the next API, round
// robin — and the same N tenants on workerd side by side in the same run (one Worker each behind a
// router Worker: bench/lib/workerd-tenants.mjs; a benchmark-only install, bench/README.md).
// Per N (DENSITY_SIZES, default 1,10,100,1000): the first request to each API (a cold start each),
// a 3 s saturated warm-up, BENCH_SECONDS saturated, as long again at half that rate; req/s, p50/p99,
// failures, RSS and threads of every process, MiB per active tenant, hog moves, busy stops and
// promotions (from Anvil's log). Then the noisy neighbour: 100 quiet tenants at a fixed rate, alone
// and while a hog (bench/apis/shared-hog) starts on their shared thread.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { progress, standalone } from './lib/config.mjs';
import { ROOT, get, startAnvil } from './lib/instance.mjs';
import { saturate } from './lib/load.mjs';
import { processTree, treeFigures } from './lib/process-tree.mjs';
import { roundRobinLoad } from './lib/round-robin-wrk.mjs';
import { median } from './lib/stats.mjs';
import { checkTarget, fmt, mib, ms, ratio } from './lib/targets.mjs';
import { WORKERD_INSTALL, pathFor, startWorkerdTenants } from './lib/workerd-tenants.mjs';

const SIZES = (process.env.DENSITY_SIZES ?? '1,10,100,1000').split(',').map(Number);
const MiB = 1024 * 1024;
const WARMUP_SECONDS = 5;
/** The noisy neighbour: quiet tenants probed at this rate, open loop, round robin. */
const QUIET_TENANTS = 100;
const QUIET_RATE = 500;
const HOG_CONNECTIONS = 16;
const keyOf = (i) => pathFor(i).split('/')[1];

/** What Anvil logged that the density targets count: hog moves, busy stops, promotions, failures. */
function logCounts(logFile) {
  let text = '';
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    // no log yet
  }
  const count = (pattern) => (text.match(pattern) ?? []).length;
  const promoted = text.split('\n').filter((line) => line.includes('it now has threads of its own'));
  const promotedFor = (reason) => promoted.filter((line) => line.includes(`"reason":"${reason}"`)).length;
  return {
    hogMoves: count(/it now runs in the low-priority cell/g),
    busyStops: count(/was stopped after [\d.]+ ms in which the busy host/g),
    promotions: count(/it now has threads of its own/g),
    demotions: count(/it now runs on a shared thread/g),
    // Why (front/scheduling/actor-table.ts logs the thread's reason): a stall that looked like a hog shows here.
    promotedDominant: promotedFor('most of a busy shared thread'),
    promotedLongStretch: promotedFor('long stretches on a shared thread'),
    promotedLongCall: promotedFor('a long custom directive call on a shared thread'),
  };
}

const difference = (after, before) =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));

/** One request to each tenant in turn (each one's first: a cold start): failures and latencies (ms). */
async function touchAll(port, n) {
  let failures = 0;
  const latencies = [];
  for (let i = 1; i <= n; i++) {
    const started = performance.now();
    const { status, body } = await get(port, pathFor(i)).catch(() => ({ status: 0, body: '' }));
    latencies.push(performance.now() - started);
    if (status !== 200 || !body.includes('pong')) failures++;
  }
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { failures, p50: at(0.5), p99: at(0.99) };
}

/** The loads of one contender at one N: warm-up, saturated, half (`host`: the Host header). */
async function loads(url, paths, { seconds, connections }, host) {
  await roundRobinLoad({ url, paths, seconds: WARMUP_SECONDS, connections, host });
  const saturated = await roundRobinLoad({ url, paths, seconds, connections, host });
  const half = await roundRobinLoad({ url, paths, seconds, connections, host, rate: Math.max(1, saturated.rps / 2) });
  return { saturated, half };
}

async function measureAnvil(n, config) {
  progress(`density: Anvil with ${n} API(s), starting`);
  const started = performance.now();
  const anvil = await startAnvil({
    apis: Array.from({ length: n }, (_, i) => ({ from: 'pong', key: keyOf(i + 1) })),
    args: ['--idle-timeout', '10m'],
    env: { ANVIL_LOG_LEVEL: 'info' },
    readyTimeoutMs: 120_000 + 200 * n,
  });
  try {
    const bootMs = performance.now() - started;
    const paths = Array.from({ length: n }, (_, i) => pathFor(i + 1));
    const cold = await touchAll(anvil.port, n);
    const afterTouch = logCounts(anvil.logFile);
    const touched = treeFigures(processTree(anvil.pid));
    // Anvil serves its APIs on the public host `localhost` (the Host header picks the host).
    const { saturated, half } = await loads(anvil.url('/'), paths, config, 'localhost');
    await sleep(500);
    const figures = treeFigures(processTree(anvil.pid));
    const counts = difference(logCounts(anvil.logFile), afterTouch);
    progress(
      `density: Anvil ${n} API(s): ${fmt(saturated.rps)} req/s, p99 ${fmt(saturated.p99Ms, 1)} ms, ${saturated.errors + half.errors} failed, ${fmt(figures.rssBytes / MiB)} MiB, ${figures.threads} threads, ${JSON.stringify(counts)}`,
    );
    return { n, bootMs, cold, touchedRssBytes: touched.rssBytes, saturated, half, ...figures, ...counts };
  } finally {
    await anvil.stop();
  }
}

async function measureWorkerd(n, config) {
  progress(`density: workerd with ${n} tenant(s), starting`);
  const peer = await startWorkerdTenants({ n });
  try {
    const paths = Array.from({ length: n }, (_, i) => peer.pathFor(i + 1));
    const cold = await touchAll(peer.port, n);
    const touched = treeFigures(peer.pids());
    const { saturated, half } = await loads(peer.url, paths, config);
    await sleep(500);
    const figures = treeFigures(peer.pids());
    progress(
      `density: workerd ${n} tenant(s): ${fmt(saturated.rps)} req/s, p99 ${fmt(saturated.p99Ms, 1)} ms, ${fmt(figures.rssBytes / MiB)} MiB`,
    );
    return { n, bootMs: peer.bootMs, cold, touchedRssBytes: touched.rssBytes, saturated, half, ...figures };
  } finally {
    await peer.stop();
  }
}

/**
 * The noisy neighbour: 100 quiet tenants probed at QUIET_RATE req/s round robin, alone, then while
 * the hog (bench/apis/shared-hog: ~30 ms of CPU per call, default limits) is loaded from its first request on — it starts on a shared
 * thread, with quiet tenants of its cell, and is given threads of its own while the probe runs.
 */
async function noisy(config) {
  const { runs, seconds } = config;
  const cells = 2;
  const { assignCell } = await import(pathToFileURL(join(ROOT, 'dist', 'cell', 'process', 'assign.js')).href);
  const { formatApiId } = await import(pathToFileURL(join(ROOT, 'dist', 'shared', 'protocol', 'api-id.js')).href);
  const cellOf = (key) => assignCell(formatApiId({ host: 'localhost', env: 'dev', key }), cells);
  const perRun = [];
  for (let run = 0; run < runs; run++) {
    // A fresh instance each run, so that the hog starts on a shared thread every time.
    const anvil = await startAnvil({
      apis: [
        ...Array.from({ length: QUIET_TENANTS }, (_, i) => ({ from: 'pong', key: keyOf(i + 1) })),
        { from: 'shared-hog' },
      ],
      args: ['--idle-timeout', '10m', '--cells', String(cells)],
      env: { ANVIL_LOG_LEVEL: 'info' },
    });
    try {
      const paths = Array.from({ length: QUIET_TENANTS }, (_, i) => pathFor(i + 1));
      const sharing = paths.filter((path) => cellOf(path.split('/')[1]) === cellOf('shared-hog')).length;
      await touchAll(anvil.port, QUIET_TENANTS);
      const host = 'localhost';
      await roundRobinLoad({ url: anvil.url('/'), paths, seconds: 2, connections: config.connections, host });
      const alone = await roundRobinLoad({
        url: anvil.url('/'),
        paths,
        seconds,
        connections: 50,
        rate: QUIET_RATE,
        host,
      });
      const before = logCounts(anvil.logFile);
      const hog = saturate(anvil.url('/shared-hog/burn'), { seconds: seconds + 2, connections: HOG_CONNECTIONS });
      const withHog = await roundRobinLoad({
        url: anvil.url('/'),
        paths,
        seconds,
        connections: 50,
        rate: QUIET_RATE,
        warmup: 0,
        host,
      });
      const hogResult = await hog;
      const counts = difference(logCounts(anvil.logFile), before);
      progress(
        `density noisy run ${run + 1}/${runs}: quiet p99 alone ${fmt(alone.p99Ms, 2)} ms, with the hog ${fmt(withHog.p99Ms, 2)} ms; hog ${fmt(hogResult.rps)} req/s; ${JSON.stringify(counts)}`,
      );
      perRun.push({ alone, withHog, hog: hogResult, sharing, ...counts });
    } finally {
      await anvil.stop();
    }
  }
  return perRun;
}

export async function run(config) {
  const anvil = [];
  const peer = [];
  let peerMissing = null;
  for (const n of SIZES) {
    anvil.push(await measureAnvil(n, config));
    if (peerMissing !== null) continue;
    try {
      peer.push(await measureWorkerd(n, config));
    } catch (error) {
      if (!/not installed/.test(String(error))) throw error;
      peerMissing = String(error.message ?? error);
      progress(`density: ${peerMissing}`);
    }
  }
  const noisyRuns = await noisy(config);

  const one = anvil.find((r) => r.n === 1);
  const perTenant = (rows, r) => {
    const base = rows.find((x) => x.n === 1);
    return base && r.n > 1 ? (r.rssBytes - base.rssBytes) / MiB / (r.n - 1) : NaN;
  };
  const errors = (r) => r.saturated.errors + r.half.errors + r.cold.failures;
  const row = (name, rows) => (r) => [
    name,
    String(r.n),
    fmt(r.saturated.rps),
    ms(r.saturated.p50Ms),
    ms(r.saturated.p99Ms),
    ms(r.half.p50Ms),
    ms(r.half.p99Ms),
    String(errors(r)),
    mib(r.rssBytes / MiB),
    String(r.threads),
    r.n > 1 ? mib(perTenant(rows, r)) : '–',
    `${ms(r.cold.p50)} / ${ms(r.cold.p99)}`,
    name === 'Anvil' ? `${r.hogMoves} / ${r.busyStops} / ${r.promotions}` : '–',
  ];
  const at = (n) => anvil.find((r) => r.n === n);
  const hundred = at(100);
  const thousand = at(1000);
  const uniform = anvil.reduce((sum, r) => sum + r.hogMoves + r.busyStops + errors(r), 0);
  const med = (f) => median(noisyRuns.map(f));
  const noisyRatio = med((r) => r.withHog.p99Ms / r.alone.p99Ms);

  const targets = [];
  if (one && hundred)
    targets.push(
      checkTarget({
        name: 'density: throughput with 100 active APIs ÷ with 1',
        measured: hundred.saturated.rps / one.saturated.rps,
        op: '>=',
        limit: 0.8,
        format: ratio,
      }),
    );
  if (thousand)
    targets.push(
      checkTarget({
        name: 'density: failed requests with 1 000 active APIs',
        measured: errors(thousand),
        op: '<=',
        limit: 0,
        format: (x) => fmt(x),
      }),
    );
  for (const r of [hundred, thousand].filter(Boolean))
    targets.push(
      checkTarget({
        name: `density: memory per active API at N = ${fmt(r.n)}`,
        measured: perTenant(anvil, r),
        op: '<=',
        limit: 2,
        format: mib,
      }),
    );
  if (one && hundred)
    targets.push(
      checkTarget({
        name: 'density: p99 at half load, 100 active APIs ÷ 1',
        measured: hundred.half.p99Ms / one.half.p99Ms,
        op: '<=',
        limit: 2,
        format: ratio,
      }),
    );
  targets.push(
    checkTarget({
      name: 'density: hog moves + busy stops + failed requests during the uniform loads',
      measured: uniform,
      op: '<=',
      limit: 0,
      format: (x) => fmt(x),
    }),
  );
  if (thousand)
    targets.push(
      checkTarget({
        name: 'density: cold start p50 with 1 000 APIs deployed',
        measured: thousand.cold.p50,
        op: '<=',
        limit: 5,
        format: ms,
      }),
    );
  if (thousand)
    targets.push(
      checkTarget({
        name: 'density: cold start p99 with 1 000 APIs deployed',
        measured: thousand.cold.p99,
        op: '<=',
        limit: 15,
        format: ms,
      }),
    );
  targets.push(
    checkTarget({
      name: "density: noisy neighbour, 100 quiet APIs' p99 while a hog starts on their thread ÷ alone",
      measured: noisyRatio,
      op: '<=',
      limit: 2,
      format: ratio,
    }),
  );

  return {
    id: 'density',
    title: '13. Density: many tenants at once (issue 42)',
    tables: [
      {
        caption: `N tenants all active at once: each request to the next tenant, round robin; wrk -t1 -c${config.connections} for ${config.seconds} s (after ${WARMUP_SECONDS} s of warm-up), then ${config.seconds} s at half that rate (open loop); failures: non-2xx and socket errors, and failed first requests; RSS and threads summed over every process; MiB per active tenant: (RSS at N − RSS at 1) ÷ (N − 1), after the loads; cold start: each tenant's first request, in turn`,
        columns: [
          '',
          'N',
          'req/s',
          'p50',
          'p99',
          'half-load p50',
          'half-load p99',
          'failed',
          'RSS',
          'threads',
          'MiB per tenant',
          'cold start p50 / p99',
          'hog moves / busy stops / own threads',
        ],
        rows: [...anvil.map(row('Anvil', anvil)), ...peer.map(row('workerd', peer))],
      },
      {
        caption: `Noisy neighbour: ${QUIET_TENANTS} quiet tenants at ${QUIET_RATE} req/s round robin (open loop, ${config.seconds} s), alone and while the hog (wrk -c${HOG_CONNECTIONS} on GET /shared-hog/burn, ~30 ms of CPU per call, default limits) starts on the shared thread of its cell; median of ${noisyRuns.length} run(s)`,
        columns: ['', 'p50', 'p99', 'failed'],
        rows: [
          [
            'quiet tenants alone',
            ms(med((r) => r.alone.p50Ms)),
            ms(med((r) => r.alone.p99Ms)),
            String(noisyRuns.reduce((s, r) => s + r.alone.errors, 0)),
          ],
          [
            'quiet tenants while the hog starts',
            ms(med((r) => r.withHog.p50Ms)),
            ms(med((r) => r.withHog.p99Ms)),
            String(noisyRuns.reduce((s, r) => s + r.withHog.errors, 0)),
          ],
        ],
      },
    ],
    targets,
    notes: [
      `Ratios are taken within this run. Anvil default flags plus --idle-timeout 10m; ${peerMissing ?? 'workerd as installed by bench/README.md'}.`,
      `Noisy neighbour: ${noisyRuns.map((r) => `${r.sharing} of the quiet tenants share the hog's cell; hog ${fmt(r.hog.rps)} req/s; own threads given ${r.promotions}, hog moves ${r.hogMoves}, busy stops ${r.busyStops}`).join('; ')}.`,
      ...(peerMissing ? [`Install the peer with: ${WORKERD_INSTALL}`] : []),
    ],
    perRun: noisyRuns.map(
      (r, i) =>
        `noisy run ${i + 1}: p99 alone ${fmt(r.alone.p99Ms, 2)} ms, while the hog starts ${fmt(r.withHog.p99Ms, 2)} ms`,
    ),
  };
}

standalone(import.meta.url, run);
