// Issue 41, case 6: one tenant erasing another's audit log. Host A (the default public host) floods
// the management API with failed PUTs (each one an audit entry) on a few connections for the
// phase, while the neighbour (bench/apis/bare) is measured at 200 req/s; host B
// (other.localhost: added with the CLI, then a deploy and a publish) must keep its entries,
// retention being per host (--audit-rows 500, as in the issue: 600 failed PUTs erased host B's
// entries before).
import { anvilCli, PUBLIC_HOST_KEY, startAnvil } from '../lib/instance.mjs';
import { tarGz } from '../lib/hostile.mjs';
import { openLoop } from '../lib/load.mjs';
import { adminRequest } from '../lib/requests.mjs';

const RATE = 200;
const ROWS = 500;
const FLOODERS = 4;
const HOST_B = { 'public-host': 'other.localhost', 'public-host-key': 'other-bench-host-key-0123456789' };
const HOST_A = { 'public-host': 'localhost', 'public-host-key': PUBLIC_HOST_KEY };

export async function phase({ seconds }) {
  const anvil = await startAnvil({
    apis: [{ from: 'bare' }],
    args: ['--audit-rows', String(ROWS)],
    readyPath: '/bare/ping',
    beforeStart: (dataDir) =>
      anvilCli([
        'hosts',
        'add-public',
        HOST_B['public-host'],
        '--env',
        'dev',
        '--key',
        HOST_B['public-host-key'],
        '--data',
        dataDir,
      ]),
  });
  try {
    const yaml = 'key: neighbour\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n';
    const deployed = await adminRequest(
      anvil.port,
      'POST',
      '/anvil/api',
      { ...HOST_B, 'content-type': 'application/gzip' },
      tarGz({ 'api.yaml': yaml }),
    );
    if (deployed.status !== 201) throw new Error(`host B's deploy answered ${deployed.status}: ${deployed.body}`);
    const release = JSON.parse(deployed.body).release;
    const published = await adminRequest(
      anvil.port,
      'PUT',
      '/anvil/api/neighbour',
      { ...HOST_B, 'content-type': 'application/json' },
      Buffer.from(JSON.stringify({ active: true, public: true, release })),
    );
    if (published.status !== 204) throw new Error(`host B's publish answered ${published.status}: ${published.body}`);
    const before = await entriesOf(anvil.port, HOST_B);

    await openLoop(anvil.url('/bare/ping'), { rate: RATE, seconds: 1, warmup: 0 });
    let running = true;
    let failedPuts = 0;
    const change = Buffer.from(JSON.stringify({ active: true, public: true, release: 'r-20200101-000000000-abcd' }));
    const flood = Array.from({ length: FLOODERS }, async (_, f) => {
      for (let i = 0; running; i++) {
        const reply = await adminRequest(
          anvil.port,
          'PUT',
          `/anvil/api/nothing-${f}-${i}`,
          { ...HOST_A, 'content-type': 'application/json' },
          change,
        );
        if (reply.status === 404) failedPuts++;
        else throw new Error(`a flooding PUT answered ${reply.status} (expected 404): ${reply.body}`);
      }
    });
    const probe = await openLoop(anvil.url('/bare/ping'), { rate: RATE, seconds });
    running = false;
    await Promise.all(flood);

    const after = await entriesOf(anvil.port, HOST_B);
    const kept = before.filter((id) => after.includes(id)).length;
    const hostAKept = (await listAudit(anvil.port, HOST_A)).filter((e) => e.host === 'localhost').length;
    return {
      case: 6,
      name: "one tenant erases another's audit log",
      measured: `host B kept ${kept} of its ${before.length} entries after ${failedPuts} failed PUTs from host A (host A keeps its newest ${hostAKept})`,
      target: "host B's entries survive",
      met: kept === before.length && before.length >= 3 && failedPuts > ROWS,
      neighbourP99Ms: probe.p99,
      neighbourErrors: probe.errors,
      notes: [
        `--audit-rows ${ROWS}: retention is per public host; the instance-wide entries (admin hosts, every API's jobs) are kept apart under the same bound`,
        `${FLOODERS} connections flooding for ${seconds} s: ${Math.round(failedPuts / seconds)} failed PUTs/s, each an audit entry of host A`,
      ],
    };
  } finally {
    await anvil.stop();
  }
}

/** Host B's own entries (not the instance-wide ones) by number. */
async function entriesOf(port, credentials) {
  return (await listAudit(port, credentials)).filter((e) => e.host === credentials['public-host']).map((e) => e.id);
}

/** Every entry the host sees (its own and the instance-wide ones), page by page. */
async function listAudit(port, credentials) {
  const entries = [];
  let before = null;
  do {
    const reply = await adminRequest(
      port,
      'GET',
      `/anvil/audit?limit=500${before === null ? '' : `&before=${before}`}`,
      credentials,
    );
    if (reply.status !== 200) throw new Error(`GET /anvil/audit answered ${reply.status}: ${reply.body}`);
    const page = JSON.parse(reply.body);
    entries.push(...page.entries);
    before = page.next;
  } while (before !== null);
  return entries;
}
