import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { FreshPostgres } from '../helpers/postgres.js';
import { DEFAULT_SPARES, startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';
import { waitFor } from '../helpers/wait-for.js';

// Cluster mode (issue 23): three instances share one control plane in a fresh Postgres database
// (DATABASE_URL) and one Redis. A change made through any instance is served by every other within
// 1.5 s: a functional requirement of the issue, measured here and logged.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LIVE_WITHIN_MS = 1_500;
/** A notice missed: the version poll (every second) finds the change instead. */
const POLLED_WITHIN_MS = 1_000 + LIVE_WITHIN_MS;
/** The bounds are about a change reaching a real host (without spares, the silent change once took 2.6 s in CI). */
const MEMBER_ARGS = ['--cells', '1', ...DEFAULT_SPARES];

function variantApi(variant: string): string {
  return `key: shop\nendpoints:\n  get /variant:\n    Reply: { directive: ModifyMessage, body: { variant: ${variant} } }\n`;
}
const HELLO = {
  'api.yaml': 'key: hello\nendpoints:\n  get /hi:\n    Reply: { directive: ModifyMessage, body: { hi: there } }\n',
};

let db: FreshPostgres;
const instances: TestInstance[] = [];
let env: Record<string, string>;

/** Milliseconds from now until `check` holds on `instance` (fails past 10 s). */
async function msUntil(instance: TestInstance, what: string, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  await waitFor(check, { what: `${what} on the instance at port ${instance.port}`, timeoutMs: 10_000, everyMs: 10 });
  return Math.round(performance.now() - started);
}

/** Waits on every instance but `through` until `check(instance)` holds; returns the times and logs them. */
async function liveOnOthers(
  through: TestInstance,
  change: string,
  check: (instance: TestInstance) => Promise<boolean>,
): Promise<number[]> {
  const others = instances.filter((i) => i !== through);
  const times = await Promise.all(others.map((i) => msUntil(i, change, () => check(i))));
  console.log(
    `control plane: ${change} through :${through.port} live on the others after ${times.map((t) => `${t} ms`).join(', ')}`,
  );
  return times;
}

async function variantOf(instance: TestInstance): Promise<string | null> {
  const reply = await instance.admin('/shop/variant');
  return reply.status === 200 ? (reply.json().variant as string) : null;
}

async function deployShop(through: TestInstance, variant: string): Promise<string> {
  const reply = await through.admin('/anvil/api', {
    method: 'POST',
    body: tarGz({ 'api.yaml': variantApi(variant) }),
    headers: { 'content-type': 'application/gzip' },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.json().release as string;
}

function put(through: TestInstance, change: { active: boolean; release: string; public: boolean }) {
  return through.admin('/anvil/api/shop', {
    method: 'PUT',
    body: JSON.stringify(change),
    headers: { 'content-type': 'application/json' },
  });
}

beforeAll(async () => {
  db = await FreshPostgres.create();
  env = { DATABASE_URL: db.url, REDIS_URL, ANVIL_REDIS_PREFIX: `anvil-test-${randomUUID()}:` };
  // Started at once: they migrate the fresh database together. Only the first is given the public
  // host key; the others take the shared one from the control plane.
  const noKey = { ANVIL_PUBLIC_HOST_KEY: undefined as unknown as string };
  instances.push(
    ...(await Promise.all([
      startInstance({ apis: { hello: HELLO }, env, args: MEMBER_ARGS }),
      startInstance({ env: { ...env, ...noKey }, args: MEMBER_ARGS }),
      startInstance({ env: { ...env, ...noKey }, args: MEMBER_ARGS }),
    ])),
  );
}, 90_000);

afterAll(async () => {
  await Promise.all(instances.map((i) => i.dispose()));
  await db?.drop();
});

describe('the control plane in Postgres (three instances)', () => {
  it('migrates once, and every instance shares the public host key and the APIs deployed at boot', async () => {
    const migrations = await db.query<{ version: number }>(
      'SELECT version FROM anvil_registry.migrations ORDER BY version',
    );
    expect(migrations.map((m) => m.version)).toEqual([1, 2]);
    for (const instance of instances) {
      await waitFor(async () => (await instance.admin('/hello/hi')).status === 200, {
        what: `hello on :${instance.port}`,
      });
      expect((await instance.request('/hello/hi')).json()).toEqual({ hi: 'there' });
      const wrongKey = await instance.admin('/anvil/api', { headers: { 'public-host-key': 'not-the-key-0123456789' } });
      expect(wrongKey.status).toBe(401);
    }
    const keys = await db.query<{ key: string }>("SELECT key FROM anvil_registry.hosts WHERE name = 'localhost'");
    expect(keys).toEqual([{ key: TEST_KEY }]);
  });

  it('serves a deploy through one instance on every other within 1.5 s, with the same release id', async () => {
    const first = await deployShop(instances[0]!, 'one');
    const times = await liveOnOthers(instances[0]!, 'deploy', async (i) => (await variantOf(i)) === 'one');
    for (const ms of times) expect(ms).toBeLessThan(LIVE_WITHIN_MS);
    for (const instance of instances)
      expect((await instance.admin('/anvil/api/shop')).json()).toMatchObject({
        release: first,
        active: true,
        public: false,
      });

    await deployShop(instances[1]!, 'two');
    const again = await liveOnOthers(instances[1]!, 'redeploy', async (i) => (await variantOf(i)) === 'two');
    for (const ms of again) expect(ms).toBeLessThan(LIVE_WITHIN_MS);
    expect((await instances[2]!.admin('/anvil/api/shop')).json().releases).toEqual([first]);
  });

  it('serves a rollback and a disable through one instance on every other within 1.5 s', async () => {
    const record = (await instances[2]!.admin('/anvil/api/shop')).json();
    const [previous] = record.releases as string[];
    expect((await put(instances[2]!, { active: true, release: previous!, public: true })).status).toBe(204);
    const rollback = await liveOnOthers(instances[2]!, 'rollback', async (i) =>
      (await i.request('/shop/variant')).text.includes('"one"'),
    );
    for (const ms of rollback) expect(ms).toBeLessThan(LIVE_WITHIN_MS);

    expect((await put(instances[0]!, { active: false, release: previous!, public: true })).status).toBe(204);
    const disable = await liveOnOthers(
      instances[0]!,
      'disable',
      async (i) => (await i.request('/shop/variant')).status === 404,
    );
    for (const ms of disable) expect(ms).toBeLessThan(LIVE_WITHIN_MS);
  });

  it('recovers a missed NOTIFY with the version poll', async () => {
    // A change committed without a notice (as if every LISTEN connection had missed it).
    await db.query(
      "UPDATE anvil_registry.apis SET active = true, public = true WHERE host = 'localhost' AND key = 'shop'",
    );
    await db.query('UPDATE anvil_registry.state SET version = version + 1');
    const polled = await Promise.all(
      instances.map((i) =>
        msUntil(i, 'the silent change', async () => (await i.request('/shop/variant')).status === 200),
      ),
    );
    console.log(`control plane: a change without NOTIFY live after ${polled.map((t) => `${t} ms`).join(', ')}`);
    for (const ms of polled) expect(ms).toBeLessThan(POLLED_WITHIN_MS);

    // Every LISTEN connection cut: the deploy made meanwhile is still served everywhere in time.
    const cut = await db.query<{ ok: boolean }>(
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'anvil-listen' AND datname = current_database()",
    );
    expect(cut.length).toBe(instances.length);
    await deployShop(instances[0]!, 'three');
    const times = await liveOnOthers(
      instances[0]!,
      'deploy with LISTEN cut',
      async (i) => (await variantOf(i)) === 'three',
    );
    for (const ms of times) expect(ms).toBeLessThan(POLLED_WITHIN_MS);
    for (const instance of instances) {
      await waitFor(() => instance.output().includes('the LISTEN connection was lost'), {
        what: `the lost LISTEN connection in the log of :${instance.port}`,
      });
    }
  });

  it('lets an instance started later catch up at boot, before it serves', async () => {
    const late = await startInstance({
      env: { ...env, ANVIL_PUBLIC_HOST_KEY: undefined as unknown as string },
      args: MEMBER_ARGS,
    });
    instances.push(late);
    expect(await variantOf(late)).toBe('three');
    expect((await late.request('/hello/hi')).status).toBe(200);
    expect((await late.admin('/anvil/api/shop')).json()).toEqual((await instances[0]!.admin('/anvil/api/shop')).json());
    for (const instance of instances)
      expect(instance.output()).not.toContain('could not be copied from the control plane');
  }, 60_000);

  it('deletes an API on every instance', async () => {
    const { release } = (await instances[0]!.admin('/anvil/api/shop')).json();
    expect((await put(instances[3]!, { active: false, release, public: false })).status).toBe(204);
    expect((await instances[1]!.admin('/anvil/api/shop', { method: 'DELETE' })).status).toBe(204);
    await liveOnOthers(instances[1]!, 'delete', async (i) => (await i.admin('/anvil/api/shop')).status === 404);
    expect(
      await db.query(
        'SELECT digest FROM anvil_registry.blobs b WHERE NOT EXISTS (SELECT 1 FROM anvil_registry.releases r WHERE r.digest = b.digest)',
      ),
    ).toEqual([]);
  });

  it('adds and removes hosts in the control plane with `anvil hosts` (DATABASE_URL), on every instance', async () => {
    const key = 'team-host-key-0123456789';
    const asTeam = (i: TestInstance) =>
      i.admin('/anvil/api', { headers: { 'public-host': 'team.localhost', 'public-host-key': key } });
    const added = anvilCli(['hosts', 'add-public', 'team.localhost', '--env', 'dev', '--key', key, '--json'], {
      env: { DATABASE_URL: db.url },
    });
    expect(added.status, added.stderr).toBe(0);
    const times = await Promise.all(
      instances.map((i) => msUntil(i, 'the new host', async () => (await asTeam(i)).status === 200)),
    );
    for (const ms of times) expect(ms).toBeLessThan(LIVE_WITHIN_MS);
    const listed = anvilCli(['hosts', 'list', '--json'], { env: { DATABASE_URL: db.url } });
    expect(JSON.parse(listed.stdout).map((h: { name: string }) => h.name)).toEqual([
      'admin.localhost',
      'localhost',
      'team.localhost',
    ]);

    expect(anvilCli(['hosts', 'remove', 'team.localhost'], { env: { DATABASE_URL: db.url } }).status).toBe(0);
    await Promise.all(
      instances.map((i) => msUntil(i, 'the host removed', async () => (await asTeam(i)).status === 401)),
    );
    const refused = anvilCli(['hosts', 'remove', 'localhost'], { env: { DATABASE_URL: db.url } });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/host "localhost" still has 1 API\(s\); delete them first/);
  });

  it('refuses management writes with a clear 503 while Postgres is gone, and keeps serving from the local replica', async () => {
    await db.drop();
    const reply = await instances[0]!.admin('/anvil/api/hello', {
      method: 'PUT',
      body: JSON.stringify({ active: false, release: 'r-20260101-000000000-abcd', public: true }),
    });
    expect(reply.status).toBe(503);
    expect(reply.json().error).toMatch(/control plane \(PostgreSQL, DATABASE_URL\) cannot be reached/);
    expect(reply.headers['retry-after']).toBe('5');
    const deploy = await instances[1]!.admin('/anvil/api', {
      method: 'POST',
      body: tarGz({ 'api.yaml': variantApi('four') }),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(deploy.status).toBe(503);
    expect(deploy.json().error).toMatch(/management writes are refused until it is back/);
    for (const instance of instances) {
      expect((await instance.request('/hello/hi')).status).toBe(200);
      expect((await instance.admin('/anvil/api/hello')).status).toBe(200);
    }
  });
});
