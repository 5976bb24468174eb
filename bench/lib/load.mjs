// Load generators.
//
// - saturate(): closed-loop maximum throughput with wrk (`wrk -t1 -cN --latency`, native, so it
//   takes less of the 2 cores from the server than a JS generator would) when /usr/bin/wrk or
//   `wrk` on PATH exists, else autocannon (programmatic). Result: rps, p50/p99 (ms) at saturation.
// - openLoop(): a fixed request rate whatever the server does (for "p99 at N % of max load" and
//   the noisy neighbour). Requests fall due every 1/rate s; each timer tick (~1 ms) sends those that
//   fell due on a free connection or queues them until one frees up. Latency is counted from the
//   tick that found the request due, so waiting for a connection (the server being slow) is
//   charged to the server (no coordinated omission) while the generator's own timer granularity
//   is not. Neither wrk (no rate) nor autocannon (its `overallRate` sends each second's quota in a
//   burst at the start of the second, and records latencies in whole ms) does this.
// - closedLoop(): N connections each sending the next request as soon as the previous answered
//   (connections = 1: sequential latency).
import { spawn, spawnSync } from 'node:child_process';
import { Connection, requestBytes } from './http-client.mjs';
import { summarize } from './stats.mjs';

/** The wrk binary, or null. */
export const WRK = ['/usr/bin/wrk', 'wrk'].find((bin) => spawnSync(bin, ['--version']).error === undefined) ?? null;

/** The load tool saturate() uses: "wrk" or "autocannon". */
export const saturationTool = WRK ? 'wrk' : 'autocannon';

/**
 * Maximum throughput: { tool, rps, p50, p99, requests, errors } (errors: non-2xx + socket errors).
 * `headers` are sent with every request; `host` is the Host header.
 */
export async function saturate(url, { seconds, connections = 50, host = 'localhost', headers = {} }) {
  return WRK
    ? wrk(url, { seconds, connections, host, headers })
    : autocannonRun(url, { seconds, connections, host, headers });
}

function wrk(url, { seconds, connections, host, headers }) {
  return runWrk(['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', ...wrkHeaders(host, headers), url]);
}

/** wrk's options for the Host header and `headers`. */
export function wrkHeaders(host, headers) {
  const args = ['-H', `Host: ${host}`];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  return args;
}

/** Runs wrk with `args` to its end: { tool, rps, p50, p99, requests, errors }, or an error with what it printed. */
export function runWrk(args) {
  if (WRK === null) return Promise.reject(new Error('wrk is not installed (Debian package wrk)'));
  return new Promise((resolve, reject) => {
    const child = spawn(WRK, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`wrk exited with ${code}: ${out}`));
      const figures = wrkFigures(out);
      if (!Number.isFinite(figures.rps)) return reject(new Error(`could not read wrk's output: ${out}`));
      resolve({ tool: 'wrk', ...figures });
    });
  });
}

/** What `wrk --latency` printed: { rps, p50, p99, requests, errors } (ms; errors: non-2xx + socket errors). */
export function wrkFigures(out) {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return { rps, p50: wrkLatency(out, '50%'), p99: wrkLatency(out, '99%'), requests, errors: non2xx + socketErrors };
}

/** A latency line of wrk's distribution ("99%    1.23ms") in ms. */
function wrkLatency(out, label) {
  const match = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
  if (!match) return NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

async function autocannonRun(url, { seconds, connections, host, headers }) {
  const { default: autocannon } = await import('autocannon');
  const latencies = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, connections, duration: seconds, headers: { host, ...headers } },
      (error, result) => {
        if (error) return reject(error);
        const stats = summarize(latencies);
        resolve({
          tool: 'autocannon',
          rps: result.requests.total / result.duration,
          p50: stats.p50,
          p99: stats.p99,
          requests: result.requests.total,
          errors: result.non2xx + result.errors + result.timeouts,
        });
      },
    );
    // autocannon's own histogram keeps whole milliseconds; the response event has the float time.
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
}

/**
 * Sends GET url at `rate` req/s for `seconds` (after `warmup` seconds at the same rate, not
 * recorded) over up to `connections` keep-alive connections (from `localAddress`, if given). Returns
 * { rate (achieved), sent, ok, errors, p50, p90, p99, max } (ms). `onRequest(startedAt, latency)`, if
 * given, sees each recorded request: when it fell due (performance.now()) and its latency (ms).
 * `paths`, if given, are requested in turn (round robin) instead of url's own path.
 */
export function openLoop(
  url,
  { rate, seconds, warmup = 1, connections = 50, host = 'localhost', headers = {}, onRequest, localAddress, paths },
) {
  const target = new URL(url);
  const requests = (paths ?? [target.pathname + target.search]).map((path) =>
    requestBytes(new URL(path, url).href, { host, headers }),
  );
  let turn = 0;
  const port = Number(target.port);
  const free = [];
  for (let i = 0; i < connections; i++) free.push(new Connection(port, target.hostname, localAddress));
  const all = [...free];
  const queue = []; // start times of requests waiting for a connection
  const interval = 1000 / rate;
  const toWarm = Math.round(rate * warmup);
  const total = Math.round(rate * seconds);
  const latencies = new Float64Array(total);
  let recorded = 0;
  let ok = 0;
  let errors = 0;
  let due = 0; // requests that have fallen due so far (warm-up included)
  let finished = 0;

  return new Promise((resolve) => {
    const begin = performance.now();
    let recordStart = 0;
    let recordEnd = 0;

    const fire = (connection, startedAt, record) => {
      const bytes = requests[turn];
      turn = (turn + 1) % requests.length;
      connection.send(bytes, (error, status) => {
        if (record) {
          if (!error && status >= 200 && status < 300) ok++;
          else errors++;
          const latency = performance.now() - startedAt;
          latencies[recorded++] = latency;
          onRequest?.(startedAt, latency);
        }
        finished++;
        const next = queue.shift();
        if (next !== undefined) fire(connection, next.startedAt, next.record);
        else free.push(connection);
        if (finished === toWarm + total) done();
      });
    };

    const timer = setInterval(() => {
      const now = performance.now();
      while (due < toWarm + total && begin + due * interval <= now) {
        const record = due >= toWarm;
        if (due === toWarm) recordStart = now;
        due++;
        const connection = free.pop();
        if (connection) fire(connection, now, record);
        else queue.push({ startedAt: now, record });
      }
      if (due === toWarm + total) {
        clearInterval(timer);
        recordEnd = now;
      }
    }, 1);

    // Requests still unanswered 10 s after the last was due count as errors.
    let guard = null;
    const done = () => {
      clearInterval(timer);
      clearTimeout(guard);
      for (const c of all) c.close();
      const stats = summarize(latencies.subarray(0, recorded));
      const elapsed = Math.max(seconds * 1000, recordEnd - recordStart) / 1000;
      resolve({
        rate: total / elapsed,
        sent: total,
        ok,
        errors: errors + (total - recorded),
        p50: stats.p50,
        p90: stats.p90,
        p99: stats.p99,
        max: stats.max,
      });
    };
    guard = setTimeout(done, (warmup + seconds + 10) * 1000);
  });
}

/**
 * `connections` connections each sending GET url again as soon as it is answered, for `seconds`.
 * Returns { rps, requests, ok, errors, p50, p90, p99, max } (ms, from send to answer).
 */
export function closedLoop(url, { seconds, connections = 1, host = 'localhost', headers = {} }) {
  const target = new URL(url);
  const bytes = requestBytes(url, { host, headers });
  const latencies = [];
  let ok = 0;
  let errors = 0;
  return new Promise((resolve) => {
    const begin = performance.now();
    const end = begin + seconds * 1000;
    let open = connections;
    const loop = (connection) => {
      const t0 = performance.now();
      if (t0 >= end) {
        connection.close();
        if (--open === 0) finish();
        return;
      }
      connection.send(bytes, (error, status) => {
        latencies.push(performance.now() - t0);
        if (!error && status >= 200 && status < 300) ok++;
        else errors++;
        loop(connection);
      });
    };
    const finish = () => {
      const stats = summarize(latencies);
      const elapsed = (performance.now() - begin) / 1000;
      resolve({
        rps: latencies.length / elapsed,
        requests: latencies.length,
        ok,
        errors,
        p50: stats.p50,
        p90: stats.p90,
        p99: stats.p99,
        max: stats.max,
      });
    };
    for (let i = 0; i < connections; i++) loop(new Connection(Number(target.port), target.hostname));
  });
}
