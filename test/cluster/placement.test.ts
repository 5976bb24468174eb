import { request as httpRequest } from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notesApi } from '../database/api-database-contract.js';
import { DEFAULT_SPARES, startInstance, type TestInstance } from '../helpers/instance.js';
import { haproxyInstalled, startHaproxy, type RunningHaproxy } from '../helpers/haproxy.js';
import { agreedOwner, memberOf, type Member } from '../helpers/placement-members.js';
import { FreshPostgres } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait-for.js';

// Cluster mode (DATABASE_URL): an API that keeps data on an instance's disk (`database: sqlite`,
// the default, with DatabaseQuery or a custom directive's state.db) is placed on one owner
// instance; the others forward its requests to the owner's internal port. Three instances on a
// fresh Postgres database, with a short lease so that a dead owner's APIs move quickly.

const LEASE_MS = 2_000;
const json = { 'content-type': 'application/json' };

/** Keeps no data of its own: served by every instance, never placed. */
const PLAIN = {
  'api.yaml': 'key: plain\nendpoints:\n  get /hi:\n    Reply: { directive: ModifyMessage, body: { hi: there } }\n',
};

/** Placed (it reads its database); answers with what the owner received. */
const ECHO = {
  'api.yaml': `key: echo
endpoints:
  post /echo:
    Size: { directive: DatabaseQuery, sql: "select length(?) as n", params: [$.message.body.text], mode: get, target: size }
    Reply: { directive: ModifyMessage, body: { ip: $.memory.ip, test: $.message.header.x-test, secret: $.message.header.anvil-cluster-secret, epoch: $.message.header.anvil-placement-epoch, size: $.memory.size.n } }
`,
};

/** A request straight to an instance's internal port. */
async function internal(
  member: Member,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string; servedBy: unknown }> {
  const response = await request(`http://127.0.0.1:${member.internalPort}${path}`, {
    headers: { host: 'localhost', ...headers },
  });
  return {
    status: response.statusCode,
    text: await response.body.text(),
    servedBy: response.headers['x-anvil-served-by'],
  };
}

/** A POST on a fresh connection from `localAddress` (any 127.x address is loopback). */
function postFrom(
  port: number,
  path: string,
  body: string,
  localAddress: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; servedBy: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        localAddress,
        agent: false,
        headers: { host: 'localhost', ...json, ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: text, servedBy: res.headers['x-anvil-served-by'] }),
        );
      },
    );
    req.on('error', reject).end(body);
  });
}

describe('placement of database: sqlite APIs on an owner instance', () => {
  let db: FreshPostgres;
  const members: Member[] = [];
  let owner: Member;

  beforeAll(async () => {
    db = await FreshPostgres.create('anvil_place');
    const apis = { notes: notesApi('sqlite'), plain: PLAIN, echo: ECHO };
    for (let i = 0; i < 3; i++) {
      // The move is timed as on a real host (without spares it once took 3.8 s in CI, past lease + 1 s).
      const instance = await startInstance({
        apis,
        env: { DATABASE_URL: db.url },
        args: ['--cells', '1', '--placement-lease', `${LEASE_MS}ms`, ...DEFAULT_SPARES],
      });
      members.push(memberOf(instance));
    }
    // Every instance agrees on one owner.
    owner = await agreedOwner(members, '/notes/notes', 'the three instances to agree on the owner of notes');
  }, 120_000);

  afterAll(async () => {
    await Promise.all(members.map((m) => m.instance.dispose()));
    await db?.drop();
  });

  it("serves a row written through any instance through every other (the owner's SQLite)", async () => {
    for (const writer of members) {
      const title = `from-${writer.id}`;
      const written = await writer.instance.request('/notes/notes', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ title, n: 1 }),
      });
      expect(written.status, written.text).toBe(200);
      expect(written.headers['x-anvil-served-by']).toBe(owner.id);
      for (const reader of members) {
        const read = await reader.instance.request(`/notes/notes/${written.json().id}`);
        expect(read.json()).toEqual({ id: written.json().id, title, n: 1 });
      }
      // Through a custom directive's state.db as well.
      const other = members.find((m) => m !== writer)!;
      expect((await other.instance.request(`/notes/custom/${written.json().id}`)).json().row.title).toBe(title);
    }
    const rows = await db.query<{ owner: string; epoch: string }>(
      "SELECT owner, epoch FROM anvil_registry.placements WHERE key = 'notes'",
    );
    expect(rows).toEqual([{ owner: owner.id, epoch: '1' }]);
  });

  it("forwards the request as it came, with the client's address, and never shows the API the cluster secret", async () => {
    const echoOwner = (
      await members[0]!.instance.request('/echo/echo', { method: 'POST', headers: json, body: '{"text":"a"}' })
    ).headers['x-anvil-served-by'];
    expect(members.map((m) => m.id)).toContain(echoOwner);
    const forwarder = members.find((m) => m.id !== echoOwner)!;
    const text = 'x'.repeat(300_000);
    // From another loopback address: the owner sees the forwarder's address as its peer, and this one as the client's.
    const reply = await postFrom(forwarder.instance.port, '/echo/echo', JSON.stringify({ text }), '127.0.0.7', {
      'x-test': 'kept',
    });
    expect(reply.status, reply.body).toBe(200);
    expect(reply.servedBy).toBe(echoOwner);
    expect(JSON.parse(reply.body)).toEqual({
      ip: '127.0.0.7',
      test: 'kept',
      secret: null,
      epoch: null,
      size: text.length,
    });
    // A client cannot pass itself off as another instance: the internal headers it sends are dropped.
    const spoofed = await postFrom(forwarder.instance.port, '/echo/echo', '{"text":"a"}', '127.0.0.7', {
      'anvil-client-address': '10.9.9.9',
      'anvil-cluster-secret': 'guess',
    });
    expect(JSON.parse(spoofed.body)).toMatchObject({ ip: '127.0.0.7', secret: null, size: 1 });
  });

  it('does not place an API that keeps no data of its own: every instance serves it', async () => {
    for (const member of members) {
      const reply = await member.instance.request('/plain/hi');
      expect(reply.status).toBe(200);
      expect(reply.headers['x-anvil-served-by']).toBeUndefined();
    }
  });

  it('refuses a request on the internal port without the cluster secret', async () => {
    expect((await internal(owner, '/notes/notes', {})).status).toBe(401);
    expect((await internal(owner, '/notes/notes', { 'anvil-cluster-secret': 'not-the-secret' })).status).toBe(401);
    const secret = (await db.query<{ secret: string }>('SELECT secret FROM anvil_registry.cluster'))[0]!.secret;
    const accepted = await internal(owner, '/notes/notes', { 'anvil-cluster-secret': secret });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.servedBy).toBe(owner.id);
    // A non-owner serves a placed API to nobody on its internal port, and never forwards it again.
    const other = members.find((m) => m !== owner)!;
    const refused = await internal(other, '/notes/notes', { 'anvil-cluster-secret': secret });
    expect(refused.status).toBe(503);
  });

  it('moves the API to a live instance within lease + 1 s after SIGKILL of its owner', async () => {
    const survivors = members.filter((m) => m !== owner);
    owner.instance.signal('SIGKILL');
    const killedAt = Date.now();
    await owner.instance.waitForExit();
    const reply = await waitFor(
      async () => {
        const r = await survivors[0]!.instance.request('/notes/notes');
        return r.status === 200 ? r : null;
      },
      { what: 'notes to answer again', timeoutMs: LEASE_MS + 10_000, everyMs: 25 },
    );
    const elapsed = Date.now() - killedAt;
    expect(elapsed, `answered again after ${elapsed} ms`).toBeLessThanOrEqual(LEASE_MS + 1_000);
    const newOwner = reply.headers['x-anvil-served-by'];
    expect(survivors.map((m) => m.id)).toContain(newOwner);
    // The new owner starts from its own data directory: the rows on the dead one's disk are not there.
    expect(reply.json().map((r: { title: string }) => r.title)).toEqual(['seed']);
    const written = await survivors[1]!.instance.request('/notes/notes', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ title: 'after', n: 2 }),
    });
    expect(written.headers['x-anvil-served-by']).toBe(newOwner);
    expect((await survivors[0]!.instance.request(`/notes/notes/${written.json().id}`)).json().title).toBe('after');
    const rows = await db.query<{ owner: string; epoch: string }>(
      "SELECT owner, epoch FROM anvil_registry.placements WHERE key = 'notes'",
    );
    expect(rows).toEqual([{ owner: newOwner, epoch: '2' }]);
  });

  it("hands a draining owner's APIs over at once, without waiting for its lease", async () => {
    const alive = members.filter((m) => m !== owner);
    const current = (await alive[0]!.instance.request('/notes/notes')).headers['x-anvil-served-by'];
    const leaving = alive.find((m) => m.id === current)!;
    const staying = alive.find((m) => m !== leaving)!;
    leaving.instance.signal('SIGTERM');
    expect(await leaving.instance.waitForExit()).toBe(0);
    const exitedAt = Date.now();
    const reply = await waitFor(
      async () => {
        const r = await staying.instance.request('/notes/notes');
        return r.status === 200 ? r : null;
      },
      { what: 'notes to answer on the last instance', timeoutMs: LEASE_MS + 10_000, everyMs: 25 },
    );
    expect(reply.headers['x-anvil-served-by']).toBe(staying.id);
    // The lease was given back when the owner had drained: no wait for it to run out.
    expect(Date.now() - exitedAt).toBeLessThan(LEASE_MS);
    const rows = await db.query<{ owner: string; epoch: string }>(
      "SELECT owner, epoch FROM anvil_registry.placements WHERE key = 'notes'",
    );
    expect(rows).toEqual([{ owner: staying.id, epoch: '3' }]);
  });
});

const installed = haproxyInstalled();

describe.skipIf(!installed && !process.env.CI)('placement behind HAProxy (deploy/haproxy.cfg as shipped)', () => {
  let db: FreshPostgres;
  const instances: TestInstance[] = [];
  let haproxy: RunningHaproxy;

  beforeAll(async () => {
    db = await FreshPostgres.create('anvil_place');
    for (let i = 0; i < 3; i++) {
      instances.push(
        await startInstance({
          apis: { notes: notesApi('sqlite'), echo: ECHO },
          env: { DATABASE_URL: db.url },
          args: ['--cells', '1', '--proxy-protocol', '--placement-lease', `${LEASE_MS}ms`],
        }),
      );
    }
    haproxy = await startHaproxy(instances.map((i) => i.port) as [number, number, number]);
    await waitFor(
      async () =>
        (await postFrom(haproxy.port, '/notes/count', '{"min":0}', '127.0.0.1', {}).catch(() => null))?.status === 200,
      { what: 'HAProxy to answer', timeoutMs: 15_000 },
    );
  }, 120_000);

  afterAll(async () => {
    await haproxy?.stop();
    await Promise.all(instances.map((i) => i.dispose()));
    await db?.drop();
  });

  it("serves every row written round robin through the balancer, from one owner, with each client's own address", async () => {
    const owners = new Set<unknown>();
    for (let i = 0; i < 6; i++) {
      const written = await postFrom(
        haproxy.port,
        '/notes/notes',
        JSON.stringify({ title: `lb-${i}`, n: i }),
        '127.0.0.1',
        {},
      );
      expect(written.status, written.body).toBe(200);
      owners.add(written.servedBy);
    }
    expect(owners.size).toBe(1);
    const counted = await postFrom(haproxy.port, '/notes/count', '{"min":0}', '127.0.0.1', {});
    expect(JSON.parse(counted.body)).toEqual({ c: 7 });
    // The address HAProxy read from the client reaches the owner, whichever instance took the connection.
    for (let i = 0; i < 3; i++) {
      const echoed = await postFrom(haproxy.port, '/echo/echo', '{"text":"abc"}', '127.0.0.9', {});
      expect(JSON.parse(echoed.body)).toMatchObject({ ip: '127.0.0.9', size: 3 });
    }
  });
});
