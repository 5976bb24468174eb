// Issue 41, case 4: file-descriptor exhaustion by an unauthenticated client. An attacker (a process
// of its own, bench/lib/half-open-attacker.mjs) opens connections as fast as it can and leaves each
// with a request head cut short; meanwhile a neighbour on another address (127.0.0.2) is measured:
// its new connections (a fresh connection per GET /bare/ping, 50/s: the figure, target
// >= 99 % answered, p99 < 500 ms) and its keep-alive requests (openLoop, 200 req/s).
// Two attacks: from one address (127.0.0.1, the issue's; --max-connections-per-client does the
// work), then from 64 addresses against --max-connections 3000 (the total binds: half-open
// connections of the addresses holding the most are evicted).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { progress } from '../lib/config.mjs';
import { BENCH_DIR, startAnvil } from '../lib/instance.mjs';
import { openLoop } from '../lib/load.mjs';
import { summarize } from '../lib/stats.mjs';
import { fmt } from '../lib/targets.mjs';

const RATE = 200;
const NEW_CONNECTIONS_PER_S = 50;
const NEIGHBOUR = '127.0.0.2';
const METRICS_TOKEN = 'bench-metrics-token-0123456789';

export async function phase({ seconds }) {
  const loadBefore = loadavg()[0];
  const one = await attack({ seconds, total: undefined, addresses: ['127.0.0.1'] });
  // On loopback the attacker takes the router's cores, as an attacker across a network does not:
  // the same attack with the attacker at the lowest priority shows the router's side alone.
  const niced = await attack({ seconds, total: undefined, addresses: ['127.0.0.1'], nice: true });
  const many = await attack({
    seconds,
    total: 3000,
    addresses: Array.from({ length: 64 }, (_, i) => `127.0.1.${i + 1}`),
  });
  const okShare = one.fresh.ok / one.fresh.sent;
  const met = okShare >= 0.99 && one.fresh.p99 < 500;
  return {
    case: 4,
    name: 'half-open connections from one client',
    measured: `neighbour's new connections ${fmt(okShare * 100, 1)} % answered, p99 ${fmt(one.fresh.p99, 1)} ms (attacker: ${one.attacker.opened} connections opened, ${one.attacker.answered} answered 429, ${one.attacker.closedUnanswered} closed unanswered; router held at most ${one.maxOpen})`,
    target: '>= 99 % answered, p99 < 500 ms',
    met,
    neighbourP99Ms: one.loop.p99,
    neighbourErrors: one.loop.errors + (one.fresh.sent - one.fresh.ok),
    notes: [
      `load average ${fmt(loadBefore, 1)} before, ${fmt(loadavg()[0], 1)} after (2 cores): the attacker, the router and the neighbour share them, and a new connection waits in the router's accept queue behind the attacker's (a SYN dropped while it is full is sent again after 1 s)`,
      `one address, default limits (--max-connections ${one.limits.total}, per client ${one.limits.perClient} from this machine's open-files limit): router held at most ${one.maxOpen} connections; neighbour's new connections p50 ${fmt(one.fresh.p50, 1)} ms, ${one.fresh.slow} of ${one.fresh.sent} took >= 500 ms (alone before the attack: p99 ${fmt(one.alone.p99, 1)} ms); keep-alive neighbour p99 ${fmt(one.loop.p99, 1)} ms, ${one.loop.errors} errors`,
      `the same with the attacker at nice 19 (its CPU not the router's, as across a network): neighbour's new connections ${fmt((niced.fresh.ok / niced.fresh.sent) * 100, 1)} % answered, p99 ${fmt(niced.fresh.p99, 1)} ms, ${niced.fresh.slow} of ${niced.fresh.sent} took >= 500 ms; attacker opened ${niced.attacker.opened}; router held at most ${niced.maxOpen}`,
      `64 addresses, --max-connections 3000: neighbour's new connections ${fmt((many.fresh.ok / many.fresh.sent) * 100, 1)} % answered, p99 ${fmt(many.fresh.p99, 1)} ms; keep-alive p99 ${fmt(many.loop.p99, 1)} ms, ${many.loop.errors} errors; attacker opened ${many.attacker.opened}, ${many.attacker.closedUnanswered} closed unanswered (evicted), ${many.attacker.answered} answered; router held at most ${many.maxOpen}`,
    ],
  };
}

async function attack({ seconds, total, addresses, nice = false }) {
  const args = total === undefined ? [] : ['--max-connections', String(total)];
  const anvil = await startAnvil({
    apis: [{ from: 'bare' }],
    args: ['--cells', '1', ...args],
    env: { ANVIL_METRICS_TOKEN: METRICS_TOKEN },
    readyPath: '/bare/ping',
  });
  try {
    const neighbour = anvil.url('/bare/ping');
    await openLoop(neighbour, { rate: RATE, seconds: 1, warmup: 0, connections: 10, localAddress: NEIGHBOUR });
    const limits = await connectionLimits(total);
    const alone = await newConnections(anvil.port, 2);
    progress(
      `connections: ${addresses.length} attacker address(es), limits ${limits.total} / ${limits.perClient} per client`,
    );
    const attackerArgs = [
      join(BENCH_DIR, 'lib/half-open-attacker.mjs'),
      JSON.stringify({ port: anvil.port, addresses, pending: 200, hold: 18_000 }),
    ];
    const child = nice
      ? spawn('nice', ['-n', '19', process.execPath, ...attackerArgs], { stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(process.execPath, attackerArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    await new Promise((r) => setTimeout(r, 1_000)); // the attack ramps up first
    let maxOpen = 0;
    const sampler = setInterval(
      () =>
        void openConnections(anvil.port).then(
          (n) => (maxOpen = Math.max(maxOpen, n)),
          () => {},
        ),
      500,
    );
    const [loop, fresh] = await Promise.all([
      openLoop(neighbour, { rate: RATE, seconds, warmup: 0, connections: 10, localAddress: NEIGHBOUR }),
      newConnections(anvil.port, seconds),
    ]);
    clearInterval(sampler);
    child.kill('SIGTERM');
    await once(child, 'close');
    const attacker = JSON.parse(out);
    progress(
      `connections: new ${fresh.ok}/${fresh.sent} p99 ${fmt(fresh.p99, 1)} ms; keep-alive p99 ${fmt(loop.p99, 1)} ms, ${loop.errors} errors; attacker ${JSON.stringify(attacker)}; router held at most ${maxOpen}`,
    );
    return { loop, fresh, alone, attacker, limits, maxOpen };
  } finally {
    await anvil.stop();
  }
}

/** A fresh connection from the neighbour's address for each GET, NEW_CONNECTIONS_PER_S a second: { sent, ok, p50, p99, slow (>= 500 ms) } (a failure counts as 5 s). */
async function newConnections(port, seconds) {
  const latencies = [];
  let ok = 0;
  const runs = [];
  const total = seconds * NEW_CONNECTIONS_PER_S;
  for (let i = 0; i < total; i++) {
    runs.push(
      fresh(port).then(({ status, ms }) => {
        if (status === 200) ok++;
        latencies.push(status === 200 ? ms : 5_000);
      }),
    );
    await new Promise((r) => setTimeout(r, 1000 / NEW_CONNECTIONS_PER_S));
  }
  await Promise.all(runs);
  const stats = summarize(latencies);
  return { sent: total, ok, p50: stats.p50, p99: stats.p99, slow: latencies.filter((ms) => ms >= 500).length };
}

function fresh(port) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: NEIGHBOUR });
    let data = '';
    const timer = setTimeout(() => socket.destroy(), 5_000);
    socket.setEncoding('latin1');
    socket.on('connect', () => socket.write('GET /bare/ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'));
    socket.on('data', (d) => (data += d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ status: Number(data.slice(9, 12)) || 0, ms: performance.now() - t0 });
    });
  });
}

/** The limits the router derives, as it does (the instance inherits this process's open-files limit). */
async function connectionLimits(total) {
  const { connectionLimits: limits, readOpenFilesLimit } = await import('../../dist/front/edge/connection-limits.js');
  return limits(total, undefined, readOpenFilesLimit());
}

/** anvil_http_connections_open, scraped from an address of its own (127.0.0.1 may be the attacker's, full), with the metrics token. */
function openConnections(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.3' });
    let data = '';
    socket.setEncoding('latin1');
    socket.on('connect', () =>
      socket.write(
        `GET /anvil/metrics HTTP/1.1\r\nHost: admin.localhost\r\nAuthorization: Bearer ${METRICS_TOKEN}\r\nConnection: close\r\n\r\n`,
      ),
    );
    socket.on('data', (d) => (data += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const match = /^anvil_http_connections_open (\d+)/m.exec(data);
      if (match) resolve(Number(match[1]));
      else reject(new Error('no anvil_http_connections_open'));
    });
  });
}
