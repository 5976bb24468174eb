// Issue 41, case 2: a tenant re-crashing its neighbours' cell with fresh API keys. Host A
// (attacker.localhost, added with the CLI) deploys six fresh keys one after another, every one
// hashed to the cell of the neighbour (bench/apis/bare on the default host, another tenant), and
// hits each once with an allocation that aborts its cell (`new Array(5e7).fill(1)`), while the
// neighbour is measured twice at once: as the issue saw it, one client with one request in flight
// (a closed loop on one connection: the Done-when's "loses <= 1 request in all"), and at 200 req/s,
// open loop (its p99, and what many requests in flight lose at the first abort). Quarantine per
// host: after host A's first abort its fresh keys start in its quarantine cell; the neighbour may
// lose only what it had in flight at that first abort.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assignCell } from '../../dist/cell/process/assign.js';
import { formatApiId } from '../../dist/shared/protocol/api-id.js';
import { tarGz } from '../lib/hostile.mjs';
import { anvilCli, BENCH_DIR, startAnvil } from '../lib/instance.mjs';
import { closedLoop, openLoop } from '../lib/load.mjs';
import { adminRequest, request } from '../lib/requests.mjs';
import { summarize } from '../lib/stats.mjs';

const RATE = 200;
const CELLS = 2;
const KEYS = 6;
const HOST_A = { 'public-host': 'attacker.localhost', 'public-host-key': 'attacker-bench-host-key-0123456789' };
const cellOf = (host, key) => assignCell(formatApiId({ host, env: 'dev', key }), CELLS);
const NEIGHBOUR_CELL = cellOf('localhost', 'bare');
const BOMB_KEYS = Array.from({ length: 500 }, (_, i) => `fresh-${i}`)
  .filter((key) => cellOf(HOST_A['public-host'], key) === NEIGHBOUR_CELL)
  .slice(0, KEYS);
const ARRAY_FILL = readFileSync(join(BENCH_DIR, 'apis', 'hostile', 'Directives', 'ArrayFill.js'), 'utf8');

export async function phase({ seconds }) {
  const anvil = await startAnvil({
    apis: [{ from: 'bare' }],
    args: ['--cells', String(CELLS), '--max-directive-cpu', '5s'],
    readyPath: '/bare/ping',
    beforeStart: (dataDir) =>
      anvilCli([
        'hosts',
        'add-public',
        HOST_A['public-host'],
        '--env',
        'dev',
        '--key',
        HOST_A['public-host-key'],
        '--data',
        dataDir,
      ]),
  });
  try {
    const neighbour = anvil.url('/bare/ping');
    await openLoop(neighbour, { rate: RATE, seconds: 1, warmup: 0 }); // the neighbour's thread and JIT

    // The attack, one fresh key after another; the neighbour is probed second by second until it is
    // over and at least `seconds` have passed.
    const attack = (async () => {
      const answers = [];
      for (const key of BOMB_KEYS) {
        const yaml = `key: ${key}\nlimits: { memoryMb: 32, cpuMs: 5000 }\nendpoints:\n  get /boom:\n    Boom: { directive: ArrayFill }\n`;
        const deployed = await adminRequest(
          anvil.port,
          'POST',
          '/anvil/api',
          { ...HOST_A, 'content-type': 'application/gzip' },
          tarGz({ 'api.yaml': yaml, 'Directives/ArrayFill.js': ARRAY_FILL }),
        );
        if (deployed.status !== 201)
          throw new Error(`host A's deploy of ${key} answered ${deployed.status}: ${deployed.body}`);
        const body = Buffer.from(
          JSON.stringify({ active: true, public: true, release: JSON.parse(deployed.body).release }),
        );
        const published = await adminRequest(
          anvil.port,
          'PUT',
          `/anvil/api/${key}`,
          { ...HOST_A, 'content-type': 'application/json' },
          body,
        );
        if (published.status !== 204)
          throw new Error(`host A's publish of ${key} answered ${published.status}: ${published.body}`);
        answers.push((await request(anvil.port, { path: `/${key}/boom`, host: HOST_A['public-host'] })).status);
      }
      return answers;
    })();
    let over = false;
    attack.finally(() => (over = true)).catch(() => {});
    const latencies = [];
    let errors = 0;
    let sent = 0;
    const began = Date.now();
    const oneInFlight = (async () => {
      const totals = { requests: 0, errors: 0 };
      while (!over || Date.now() - began < seconds * 1000) {
        const r = await closedLoop(neighbour, { seconds: 1, connections: 1 });
        totals.requests += r.requests;
        totals.errors += r.errors;
      }
      return totals;
    })();
    while (!over || Date.now() - began < seconds * 1000) {
      const probe = await openLoop(neighbour, {
        rate: RATE,
        seconds: 1,
        warmup: 0,
        onRequest: (_at, ms) => latencies.push(ms),
      });
      errors += probe.errors;
      sent += probe.sent;
    }
    const answers = await attack;
    const single = await oneInFlight;
    const stats = summarize(Float64Array.from(latencies));

    const logged = readFileSync(anvil.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .map((entry) => ({ ...entry, at: Date.parse(entry.time) }));
    const deaths = logged.filter((entry) => entry.msg === 'cell died; restarting it');
    const neighbourCellDeaths = deaths.filter((d) => d.cell === NEIGHBOUR_CELL).length;
    // The neighbour's requests the router failed (its log, to the ms): up to the first cell death, and after it.
    const firstDeath = deaths[0]?.at ?? Infinity;
    const neighbourFailures = logged.filter(
      (entry) => entry.msg?.startsWith('request failed') && entry.host === 'localhost' && entry.api === 'bare',
    );
    // (Those in flight at the death are failed as its sockets close, a few ms around its exit.)
    const lostAfterFirst = neighbourFailures.filter((entry) => entry.at > firstDeath + 200).length;
    const statuses = [...new Set(answers)].sort().join('/');
    return {
      case: 2,
      name: "a tenant re-crashes its neighbours' cell with fresh API keys",
      measured: `the neighbour with one request in flight lost ${single.errors} of ${single.requests}; at ${RATE} req/s it lost ${errors} of ${sent}, ${neighbourFailures.length - lostAfterFirst} of them in flight at host A's first abort and ${lostAfterFirst} after it; its cell died ${neighbourCellDeaths}× (${deaths.length} cell deaths in all, ${BOMB_KEYS.length} fresh keys)`,
      target: '<= 1 failed request in all (one in flight)',
      met: single.errors <= 1 && single.requests > 0 && BOMB_KEYS.length === KEYS,
      neighbourP99Ms: stats.p99,
      neighbourMaxMs: stats.max,
      neighbourErrors: errors,
      oneInFlight: single,
      cellDeaths: deaths.length,
      neighbourCellDeaths,
      neighbourLostAfterFirstAbort: lostAfterFirst,
      notes: [
        `host A's ${BOMB_KEYS.length} keys (${BOMB_KEYS.join(', ')}) all hash to the neighbour's cell ${NEIGHBOUR_CELL} of ${CELLS}; each was deployed, published and hit once (answers ${answers.join(', ')}: ${statuses})`,
        `--host-abort-limit 2, --host-abort-window 10m (the defaults): after the first abort host A's new keys start in its quarantine cell; the second culprit moves all its APIs there; each later one pauses host A (503 ANVIL_ERR_HOST_PAUSED, 1 s doubling)`,
        `the neighbour with one request in flight (one connection, each GET sent when the last was answered): ${single.requests} requests, ${single.errors} failed`,
        `neighbour = GET /bare/ping at ${RATE} req/s, open loop, ${Math.round((Date.now() - began) / 1000)} s (the attack's length): p99 ${stats.p99.toFixed(2)} ms, max ${stats.max.toFixed(1)} ms (the max is the neighbour's cell restarting after the first abort)`,
        ...(anvil.warnings() ? [`Anvil's log: ${anvil.warnings()}`] : []),
      ],
    };
  } finally {
    await anvil.stop();
  }
}
