// The density benchmark's peer on its own (issue 42), not in `npm run bench`: N tenants on workerd
// (lib/workerd-tenants.mjs) for N in DENSITY_SIZES (1,10,100,1000). Per N: boot, one request to
// every tenant, a 3 s saturated warm-up, BENCH_SECONDS (5) saturated then as long at half that rate,
// all round robin over the N; the RSS of every workerd process after the first requests and after
// the loads, and their threads. Prints a table (stdout; progress on stderr).
import { setTimeout as sleep } from 'node:timers/promises';
import { progress, readConfig } from './lib/config.mjs';
import { cleanupAll, cleanupOnSignals, get } from './lib/instance.mjs';
import { treeFigures } from './lib/process-tree.mjs';
import { roundRobinLoad } from './lib/round-robin-wrk.mjs';
import { fmt } from './lib/targets.mjs';
import { WORKERD_VERSION, startWorkerdTenants } from './lib/workerd-tenants.mjs';

const SIZES = (process.env.DENSITY_SIZES ?? '1,10,100,1000').split(',').map(Number);
const MiB = 1024 * 1024;

/** One request to each tenant, in turn: how many did not answer 200 {"message":"pong"}. */
async function touchAll(peer, n) {
  let failures = 0;
  for (let i = 1; i <= n; i++) {
    const { status, body } = await get(peer.port, peer.pathFor(i)).catch(() => ({ status: 0, body: '' }));
    if (status !== 200 || JSON.parse(body || '{}').message !== 'pong') failures++;
  }
  return failures;
}

async function measure(n, { seconds, connections }) {
  progress(`workerd: ${n} tenant(s), booting`);
  const peer = await startWorkerdTenants({ n });
  try {
    const paths = Array.from({ length: n }, (_, i) => peer.pathFor(i + 1));
    const touchFailures = await touchAll(peer, n);
    const touched = treeFigures(peer.pids());
    progress(`workerd: ${n} tenant(s) up in ${fmt(peer.bootMs)} ms, warming up`);
    await roundRobinLoad({ url: peer.url, paths, seconds: 3, connections });
    const saturated = await roundRobinLoad({ url: peer.url, paths, seconds, connections });
    progress(`workerd: ${n} tenant(s) ${fmt(saturated.rps)} req/s saturated, now at half`);
    const half = await roundRobinLoad({ url: peer.url, paths, seconds, connections, rate: saturated.rps / 2 });
    await sleep(500);
    const figures = treeFigures(peer.pids());
    return { n, bootMs: peer.bootMs, touchFailures, touchedRssBytes: touched.rssBytes, saturated, half, ...figures };
  } finally {
    await peer.stop();
  }
}

function table(rows) {
  const one = rows.find((r) => r.n === 1);
  const head = ['N', 'req/s', 'p50 ms', 'p99 ms', 'half req/s', 'half p50', 'half p99', 'errors', 'RSS touched MiB', 'RSS loaded MiB', 'threads', 'MiB/tenant touched, over N=1', 'MiB/tenant loaded, over N=1', 'MiB/tenant loaded, RSS/N', 'boot ms'];
  const lines = rows.map((r) => {
    const over = (field) => (one && r.n > 1 ? fmt((r[field] - one[field]) / MiB / (r.n - 1), 2) : '–');
    const errors = r.touchFailures + r.saturated.errors + r.half.errors;
    return [r.n, fmt(r.saturated.rps), fmt(r.saturated.p50Ms, 2), fmt(r.saturated.p99Ms, 2), fmt(r.half.rps), fmt(r.half.p50Ms, 2), fmt(r.half.p99Ms, 2), errors, fmt(r.touchedRssBytes / MiB, 1), fmt(r.rssBytes / MiB, 1), r.threads, over('touchedRssBytes'), over('rssBytes'), fmt(r.rssBytes / MiB / r.n, 2), fmt(r.bootMs)];
  });
  return [head, head.map(() => '---'), ...lines].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

cleanupOnSignals();
try {
  const config = readConfig();
  const rows = [];
  for (const n of SIZES) rows.push(await measure(n, config));
  process.stdout.write(`${table(rows)}\n\n`);
  process.stdout.write(
    `workerd ${WORKERD_VERSION}, ${config.connections} connections, ${config.seconds} s per load; ` +
      'errors: failed first requests + non-2xx and socket errors of both loads; RSS and threads summed over the workerd process tree, touched: after one request to each tenant, loaded: after both loads (it grows with the requests served, not only with N).\n',
  );
} catch (error) {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
