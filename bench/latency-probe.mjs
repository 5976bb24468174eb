// Open-loop latency probe: sends GET <url> at a fixed rate for a fixed time, whatever the server
// does, and records each request's latency from the moment it was due to be sent (so a stalled
// server is charged for the requests that queued behind it: no coordinated omission).
// The first second is sent at the same rate but not recorded (connections, JIT warm-up).
// Prints one line: `sent= ok= errors= rate= p50= p90= p99= max=` (latencies in ms).
// Usage: node bench/latency-probe.mjs <url> [rate=500] [seconds=10] [host=localhost] [connections=32]
import { Pool } from 'undici';

const [url, rateArg = '500', secondsArg = '10', host = 'localhost', connectionsArg = '32'] = process.argv.slice(2);
if (!url) {
  process.stderr.write('usage: node bench/latency-probe.mjs <url> [rate] [seconds] [host] [connections]\n');
  process.exit(2);
}
const target = new URL(url);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
const total = Math.round(rate * seconds);
const interval = 1000 / rate;
const warmup = Math.round(rate * 1);
const pool = new Pool(target.origin, { connections: Number(connectionsArg), pipelining: 1, keepAliveTimeout: 30_000 });
const path = target.pathname + target.search;

const latencies = new Float64Array(total);
let ok = 0;
let errors = 0;
let done = 0;
let sent = 0;

function fire(dueAt, recorded) {
  pool
    .request({ method: 'GET', path, headers: { host } })
    .then(
      async (res) => {
        await res.body.dump();
        return res.statusCode === 200;
      },
      () => false,
    )
    .then((success) => {
      if (!recorded) return;
      if (success) ok++;
      else errors++;
      latencies[done++] = performance.now() - dueAt;
      if (done === total) finish();
    });
}

// Every tick (≈1 ms) sends all the requests that have fallen due since the last one.
const begin = performance.now();
const start = begin + warmup * interval;
let warm = 0;
const timer = setInterval(() => {
  const now = performance.now();
  while (warm < warmup && begin + warm * interval <= now) fire(begin + interval * warm++, false);
  while (warm === warmup && sent < total && start + sent * interval <= now) fire(start + interval * sent++, true);
  if (sent === total) clearInterval(timer);
}, 1);

function finish() {
  const elapsed = (performance.now() - start) / 1000;
  const sorted = latencies.slice(0, done).sort();
  const pct = (p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  const f = (x) => x.toFixed(2);
  process.stdout.write(
    `sent=${total} ok=${ok} errors=${errors} rate=${(total / Math.max(seconds, elapsed)).toFixed(0)} ` +
      `p50=${f(pct(50))} p90=${f(pct(90))} p99=${f(pct(99))} max=${f(sorted[sorted.length - 1])}\n`,
  );
  pool.close().then(() => process.exit(0));
}
