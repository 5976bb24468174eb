import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance } from '../helpers/instance.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { agreedOwner, memberOf, type Member } from '../helpers/placement-members.js';
import { FreshPostgres } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait-for.js';

// Cluster mode with a shared Redis: the ways into a placed API that are not a client's request —
// its jobs (BullMQ hands each to any instance's worker) and bus calls from other APIs (Pull,
// LocalCall) — run on its owner instance, against the owner's SQLite, like its requests.

const REDIS_URL = process.env.ANVIL_TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LEASE_MS = 2_000;
const json = { 'content-type': 'application/json' };

/** Placed (it keeps rows): each job writes one row where it runs, with the instance that queued it (a job keeps the memory of its request). */
const LEDGER = {
  'api.yaml': `key: ledger
endpoints:
  post /queue:
    Queue: { directive: ForTheWorker, identifier: true }
    Write: { directive: DatabaseQuery, sql: "insert into runs (job, queued_by) values (?, ?)", params: [$.id, $.memory.anvil-localhost], mode: run }
  post /later:
    Queue: { directive: ForTheWorker, delay: 2, identifier: true }
    Write: { directive: DatabaseQuery, sql: "insert into runs (job, queued_by) values (?, ?)", params: [$.id, $.memory.anvil-localhost], mode: run }
  get /runs:
    All: { directive: DatabaseQuery, sql: "select job, queued_by from runs order by id", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
  post /notes:
    Add: { directive: DatabaseQuery, sql: "insert into notes (title) values (?)", params: [$.message.body.title], mode: run }
    Reply: { directive: ModifyMessage, body: { by: $.memory.anvil-localhost } }
  get /notes:
    All: { directive: DatabaseQuery, sql: "select title from notes order by id", target: rows }
    Reply: { directive: ModifyMessage, body: { by: $.memory.anvil-localhost, titles: $.memory.rows } }
`,
  'Assets/db/001-ledger.sql': `create table runs (id integer primary key, job text not null, queued_by text not null);
create table notes (id integer primary key, title text not null);
insert into notes (title) values ('seed');
`,
};

/** Keeps nothing of its own (not placed: every instance serves it); reads and writes the ledger over the bus. */
const READER = {
  'api.yaml': `key: reader
endpoints:
  get /notes:
    Get: { directive: Pull, host: $.memory.anvil-localhost, path: /ledger/notes, target: got }
    Reply: { directive: ModifyMessage, body: { here: $.memory.anvil-localhost, got: $.memory.got } }
  post /notes:
    Call: { directive: LocalCall, method: POST, path: /ledger/notes, body: { title: $.message.body.title } }
`,
};

async function completedRuns(member: Member): Promise<number> {
  return (
    sample(await scrapeMetrics(member.instance), 'anvil_job_runs_total', {
      host: 'localhost',
      api: 'ledger',
      outcome: 'completed',
    }) ?? 0
  );
}

describe('jobs and bus calls of a placed API run on its owner', () => {
  let db: FreshPostgres;
  const members: Member[] = [];
  let owner: Member;
  let others: Member[];

  beforeAll(async () => {
    db = await FreshPostgres.create('anvil_placed_work');
    const env = { DATABASE_URL: db.url, REDIS_URL, ANVIL_REDIS_PREFIX: `anvil-test-${randomUUID()}:` };
    for (let i = 0; i < 3; i++) {
      const instance = await startInstance({
        apis: { ledger: LEDGER, reader: READER },
        env,
        args: ['--cells', '1', '--placement-lease', `${LEASE_MS}ms`],
      });
      members.push(memberOf(instance));
    }
    owner = await agreedOwner(members, '/ledger/notes', 'the three instances to agree on the owner of ledger');
    others = members.filter((m) => m !== owner);
    expect(others).toHaveLength(2);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(members.map((m) => m.instance.dispose()));
    await db?.drop();
  });

  it('runs each job queued through a non-owner once, on the owner, whichever instance took it', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const reply = await others[i % 2]!.instance.request('/ledger/queue', {
        method: 'POST',
        body: '{}',
        headers: json,
      });
      expect(reply.status, reply.text).toBe(202);
      ids.push(reply.json().id);
    }
    const read = async () =>
      (await others[0]!.instance.request('/ledger/runs')).json() as Array<{ job: string; queued_by: string }>;
    await waitFor(async () => (await read()).length >= 20, {
      what: "20 job runs in the owner's database",
      timeoutMs: 60_000,
    });
    // Time for a second run of any of them to show.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const runs = await read();
    expect(runs.map((r) => r.job).sort()).toEqual([...ids].sort());
    // Queued by the owner (the requests were forwarded there), and run there: the rows are in its database.
    expect(new Set(runs.map((r) => r.queued_by))).toEqual(new Set([owner.url]));
    // The non-owners' workers took some of them (each counts the runs it settled) and had the owner run them.
    const counted = await Promise.all(members.map(completedRuns));
    expect(counted.reduce((a, b) => a + b, 0)).toBe(20);
    expect(counted[members.indexOf(others[0]!)]! + counted[members.indexOf(others[1]!)]!).toBeGreaterThan(0);
  }, 90_000);

  it("delivers a bus call made on a non-owner to the owner: Pull reads and LocalCall writes the owner's rows", async () => {
    const written = await owner.instance.request('/ledger/notes', {
      method: 'POST',
      body: JSON.stringify({ title: 'by-request' }),
      headers: json,
    });
    expect(written.json()).toEqual({ by: owner.url });
    for (const caller of others) {
      const reply = await caller.instance.request('/reader/notes');
      expect(reply.status, reply.text).toBe(200);
      // The reader ran where it was called; the ledger it pulled from ran on its owner.
      expect(reply.headers['x-anvil-served-by']).toBeUndefined();
      expect(reply.json()).toEqual({
        here: caller.url,
        got: { by: owner.url, titles: expect.arrayContaining([{ title: 'seed' }, { title: 'by-request' }]) },
      });

      const title = `over-the-bus-from-${caller.id}`;
      const call = await caller.instance.request('/reader/notes', {
        method: 'POST',
        body: JSON.stringify({ title }),
        headers: json,
      });
      expect(call.status, call.text).toBe(200);
      expect(call.json()).toEqual({ by: owner.url });
      const onOwner = (await owner.instance.request('/ledger/notes')).json();
      expect(onOwner.titles).toContainEqual({ title });
    }
    // A client cannot make its request an operation of the internal port: the header is dropped by the forwarder.
    const job = JSON.stringify({
      id: 'j-spoofed',
      api: 'localhost/production/ledger',
      payload: '{}',
      title: 'spoofed',
    });
    const spoofed = await others[0]!.instance.request('/ledger/notes', {
      method: 'POST',
      body: job,
      headers: { ...json, 'anvil-internal-op': 'job-run' },
    });
    expect(spoofed.status, spoofed.text).toBe(200);
    expect(spoofed.json()).toEqual({ by: owner.url });
  });

  it('runs a job whose owner died before it was due once, on the next owner', async () => {
    const queuedAt = Date.now();
    const replies = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) =>
        others[i % 2]!.instance.request('/ledger/later', { method: 'POST', body: '{}', headers: json }),
      ),
    );
    for (const reply of replies) expect(reply.status, reply.text).toBe(202);
    const ids = replies.map((reply) => reply.json().id as string);
    // Killed before the jobs are due (2 s), so that the owner never takes one. They are due about
    // when its lease (2 s) runs out: the survivors' workers that take one wait for the next owner.
    owner.instance.signal('SIGKILL');
    expect(Date.now() - queuedAt, 'the jobs were queued too slowly for this test').toBeLessThan(1_500);
    await owner.instance.waitForExit();
    const read = async () => {
      const reply = await others[0]!.instance.request('/ledger/runs');
      return reply.status === 200 ? (reply.json() as Array<{ job: string; queued_by: string }>) : [];
    };
    await waitFor(async () => (await read()).length >= ids.length, {
      what: 'the delayed jobs to run on the next owner',
      timeoutMs: 30_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const runs = await read();
    // The next owner started from its own data directory: these runs, once each, are all it has.
    expect(runs.map((r) => r.job).sort()).toEqual([...ids].sort());
    expect(new Set(runs.map((r) => r.queued_by))).toEqual(new Set([owner.url]));
    expect(others.map((m) => m.url)).toContain((await others[1]!.instance.request('/ledger/notes')).json().by);
  }, 60_000);
});
