// Issue 41, case 1: router memory through response headers. A custom directive answers with a
// 10 MiB header (bench/apis/big-header); 40 clients ask for it and never read. It used to take the
// router from 66 MB to 1 383 MB RSS. Now the thread refuses the head (--max-response-header-bytes,
// 64 KiB: 500 ANVIL_ERR_QUOTA_RESPONSE_HEADER_BYTES) before the router sees it. Measured: the
// router's RSS growth while the 40 clients hold their connections (target < 256 MiB), and a
// neighbour (bench/apis/bare, GET /bare/ping, 200 req/s) meanwhile.
import { get, startAnvil } from '../lib/instance.mjs';
import { openLoop } from '../lib/load.mjs';
import { rssMiB, stalledReader } from '../lib/stalled-readers.mjs';
import { fmt } from '../lib/targets.mjs';

const RATE = 200;
const CLIENTS = 40;
const TARGET_MIB = 256;

export async function phase({ seconds }) {
  const anvil = await startAnvil({ apis: [{ from: 'bare' }, { from: 'big-header' }], readyPath: '/bare/ping' });
  try {
    const neighbour = anvil.url('/bare/ping');
    await openLoop(neighbour, { rate: RATE, seconds: 1, warmup: 0 });
    // The attacker's thread and isolate exist before the baseline: one client that reads.
    await get(anvil.port, '/big-header/big');
    const before = rssMiB(anvil.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(anvil.pid))), 100);
    const probing = openLoop(neighbour, { rate: RATE, seconds, warmup: 0 });
    const readers = [];
    for (let i = 0; i < CLIENTS; i++) readers.push(stalledReader(anvil.port, '/big-header/big'));
    // Every client has its answer's first bytes (or the wait gave up), then a second more.
    const started = performance.now();
    const allHeaded = await Promise.race([
      Promise.all(readers.map((r) => r.headed)).then(() => true),
      new Promise((r) => setTimeout(() => r(false), 60_000)),
    ]);
    const answeredMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, 1_000));
    const probe = await probing;
    clearInterval(sampler);
    peak = Math.max(peak, rssMiB(anvil.pid));
    const answers = await Promise.all(readers.map((r) => r.finish()));
    const statuses = countBy(answers.map((a) => a.status));
    const metrics = (await get(anvil.port, '/anvil/metrics', { host: 'admin.localhost' })).body;
    const refused = Number(
      /^anvil_quota_refusals_total\{[^}]*api="big-header"[^}]*quota="response_header_bytes"[^}]*\} (\d+)/m.exec(
        metrics,
      )?.[1] ?? 0,
    );
    const grown = peak - before;
    return {
      case: 1,
      name: 'router memory through response headers',
      measured: `router RSS +${fmt(grown, 1)} MiB (${fmt(before, 0)} → ${fmt(peak, 0)} MiB at most) with ${CLIENTS} non-reading clients of a 10 MiB header`,
      target: `< ${TARGET_MIB} MiB`,
      met: grown < TARGET_MIB,
      neighbourP99Ms: probe.p99,
      neighbourErrors: probe.errors,
      notes: [
        `${allHeaded ? `all ${CLIENTS} clients had the first bytes of their answer within ${fmt(answeredMs / 1000, 1)} s` : `not all ${CLIENTS} clients had an answer after 60 s`}`,
        `the ${CLIENTS} clients' answers: ${Object.entries(statuses)
          .map(([s, n]) => `${n} × ${s}`)
          .join(
            ', ',
          )}; anvil_quota_refusals_total{quota="response_header_bytes"} ${refused} (the warm-up request included)`,
        `neighbour GET /bare/ping at ${RATE} req/s for ${seconds} s meanwhile: p50 ${fmt(probe.p50, 2)} ms, p99 ${fmt(probe.p99, 2)} ms, max ${fmt(probe.max, 1)} ms, ${probe.errors} errors`,
      ],
    };
  } finally {
    await anvil.stop();
  }
}

function countBy(values) {
  const out = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
