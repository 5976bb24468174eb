// The soak's traffic (bench/soak.mjs): mixed requests over the example APIs of apis/, paced to a
// rate, plus the operator's work: deploys and rollbacks of an API, and bursts of jobs.
// Every answer's status is counted; a request that gets no answer counts as status 0.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { tarGz } from './hostile.mjs';
import { PUBLIC_HOST_KEY } from './instance.mjs';

const JSON_HEADERS = { 'content-type': 'application/json' };
const ADMIN_HEADERS = { host: 'admin.localhost', 'public-host': 'localhost', 'public-host-key': PUBLIC_HOST_KEY };

/** An HTTP client of one instance that counts statuses by request kind. */
export function soakClient(instance) {
  // A bounded pool, so the router's descriptors count leaks, not the load's connections of the moment.
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 16 });
  const statuses = new Map();
  const count = (kind, status) => {
    const key = `${kind} ${status}`;
    statuses.set(key, (statuses.get(key) ?? 0) + 1);
  };
  /** One request; resolves { status, body } (status 0 when no answer came). */
  async function send(kind, method, path, { body, headers = {}, host = 'localhost' } = {}) {
    try {
      const response = await request(instance.url(path), {
        method,
        body,
        headers: { host, ...headers },
        dispatcher: agent,
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      const text = await response.body.text();
      count(kind, response.statusCode);
      return { status: response.statusCode, body: text };
    } catch {
      count(kind, 0);
      return { status: 0, body: '' };
    }
  }
  return { send, statuses, close: () => agent.close() };
}

/** The mixed traffic: one scenario per call, each one to three requests. `proxy` is left out: its upstream is on the internet. */
export function scenarios(client) {
  const { send } = client;
  const json = (kind, method, path, value) =>
    send(kind, method, path, { body: JSON.stringify(value), headers: JSON_HEADERS });
  let n = 0;
  return [
    () => send('ping', 'GET', '/ping/ping'),
    () => send('greeter', 'GET', `/greeter/hello/soak${n++ % 100}`),
    () => send('greeter', 'GET', '/greeter/settings'),
    () => send('dynamic', 'GET', '/dynamic/greet/Ann?limit=2'),
    () => send('limited', 'GET', '/limited/hello'),
    () => send('orders', 'GET', '/orders/products'),
    () => json('orders', 'POST', '/orders', { product: 1 + (n++ % 3), quantity: 1, note: 'soak' }),
    () => send('orders', 'GET', '/orders/last'),
    () => send('orders', 'GET', '/orders/1'),
    async () => {
      const created = await json('users', 'POST', '/users', { name: `Soak ${n}`, email: `soak${n++}@example.org` });
      const id = created.status === 201 ? JSON.parse(created.body).id : undefined;
      if (id === undefined) return;
      await send('users', 'GET', `/users/${id}`);
      await send('users', 'DELETE', `/users/${id}`);
    },
    () => send('users', 'GET', '/users?limit=5'),
    () => send('secured', 'GET', '/secured/status', { headers: { 'api-key': 'change-me' } }),
    () =>
      send('secured', 'POST', '/secured/echo', {
        body: 'soak',
        headers: { 'api-key': 'change-me', 'content-type': 'text/plain' },
      }),
    () => send('secured', 'GET', '/secured/status'),
    () => send('pages', 'GET', '/pages/'),
    () => send('pages', 'GET', '/pages/about'),
    () => send('pages', 'GET', '/pages/no/such/page'),
    () => send('site', 'GET', '/site/'),
    () => send('site', 'GET', '/site/hello'),
    () => send('site', 'GET', '/site/static/css/site.css'),
    () => send('reports', 'GET', `/reports/${1 + (n++ % 50)}`),
  ];
}

/**
 * Runs the scenarios round-robin on `workers` concurrent loops until `until()`, paced so that the
 * whole load starts about `rate` scenarios a second (a loop that falls behind does not catch up
 * in a burst).
 */
export async function mixedTraffic(list, { rate, workers, until }) {
  let next = 0;
  const interval = (1000 * workers) / rate;
  const loop = async () => {
    let due = performance.now();
    while (!until()) {
      await list[next++ % list.length]();
      due = Math.max(due + interval, performance.now() - interval);
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
}

/** `count` jobs queued at once on the reports example (POST /reports/: 202 each). */
export async function jobBurst(client, count) {
  const words = ['anvil', 'soak', 'queue', 'burst', 'window', 'clock'];
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      client.send('job', 'POST', '/reports/', {
        body: JSON.stringify({ words: words.slice(0, 1 + (i % words.length)) }),
        headers: JSON_HEADERS,
      }),
    ),
  );
}

/**
 * A new release of the greeter example (its greeting numbered `round`) deployed through the
 * management API; every second round, a rollback to the release before instead. Returns what it did.
 */
export async function deployOrRollback(client, round) {
  if (round % 2 === 1) {
    const record = await client.send('admin', 'GET', '/anvil/api/greeter', {
      host: ADMIN_HEADERS.host,
      headers: ADMIN_HEADERS,
    });
    if (record.status !== 200) return `rollback: the record answered ${record.status}`;
    const { release, releases, active, public: isPublic } = JSON.parse(record.body);
    const previous = releases
      .filter((r) => r < release)
      .sort()
      .at(-1);
    if (previous === undefined) return 'rollback: no earlier release';
    const put = await client.send('admin', 'PUT', '/anvil/api/greeter', {
      host: ADMIN_HEADERS.host,
      headers: { ...ADMIN_HEADERS, ...JSON_HEADERS },
      body: JSON.stringify({ active, public: isPublic, release: previous }),
    });
    return `rollback to ${previous}: ${put.status}`;
  }
  const archive = tarGz(greeterFiles(round));
  const deployed = await client.send('admin', 'POST', '/anvil/api', {
    host: ADMIN_HEADERS.host,
    headers: { ...ADMIN_HEADERS, 'content-type': 'application/gzip' },
    body: archive,
  });
  return `deploy round ${round}: ${deployed.status}`;
}

/** The greeter example, its greeting numbered. */
function greeterFiles(round) {
  return {
    'api.yaml': `key: greeter
endpoints:
  get /hello/{name}:
    Greeting: { directive: Concat, element1: $.map.main.greeting, element2: ", ", element3: $.message.pathParam.name, target: text }
    Reply: { directive: ModifyMessage, headers: { content-type: application/json }, body: { greeting: $.memory.text } }
  get /settings:
    Reply: { directive: ModifyMessage, body: $.map.main }
`,
    'Maps/main.json': JSON.stringify({ greeting: `Hello #${round}` }),
  };
}

/** Waits `ms`, in steps, returning early once `until()`. */
export async function pause(ms, until) {
  const end = Date.now() + ms;
  while (!until() && Date.now() < end) await sleep(Math.min(500, end - Date.now()));
}
