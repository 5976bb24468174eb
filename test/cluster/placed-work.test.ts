import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { FreshPostgres } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait-for.js';

// Cluster mode with a shared Redis: the ways into a placed API that are not a client's request —
// its jobs (BullMQ hands each to any instance's worker) and bus calls from other APIs (Pull,
// LocalCall) — run on its owner instance, against the owner's SQLite, like its requests.

const REDIS_URL = process.env.ANVIL_TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LEASE_MS = 2_000;
const json = { 'content-type': 'application/json' };

/** Placed (it keeps rows): each job writes one row, with the instance that ran it. */
const LEDGER = {
  'api.yaml': `key: ledger
endpoints:
  post /queue:
    Queue: { directive: ForTheWorker, identifier: true }
    Write: { directive: DatabaseQuery, sql: "insert into runs (job, by) values (?, ?)", params: [$.id, $.memory.anvil-localhost], mode: run }
  get /runs:
    All: { directive: DatabaseQuery, sql: "select job, by from runs order by id", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
  post /notes:
    Add: { directive: DatabaseQuery, sql: "insert into notes (title) values (?)", params: [$.message.body.title], mode: run }
    Reply: { directive: ModifyMessage, body: { by: $.memory.anvil-localhost } }
  get /notes:
    All: { directive: DatabaseQuery, sql: "select title from notes order by id", target: rows }
    Reply: { directive: ModifyMessage, body: { by: $.memory.anvil-localhost, titles: $.memory.rows } }
`,
  'Assets/db/001-ledger.sql': `create table runs (id integer primary key, job text not null, by text not null);
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

interface Member {
  instance: TestInstance;
  id: string;
  /** `$.memory.anvil-localhost` on this instance. */
  url: string;
}

function memberOf(instance: TestInstance): Member {
  const line = instance.logLines().find((l) => l.msg === 'placement: this instance takes part in placement');
  if (line === undefined) throw new Error(`no placement line in the log:\n${instance.output()}`);
  return { instance, id: line.instance, url: `http://localhost:${instance.port}` };
}

async function completedRuns(member: Member): Promise<number> {
  return sample(await scrapeMetrics(member.instance), 'anvil_job_runs_total', { host: 'localhost', api: 'ledger', outcome: 'completed' }) ?? 0;
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
      const instance = await startInstance({ apis: { ledger: LEDGER, reader: READER }, env, args: ['--cells', '1', '--placement-lease', `${LEASE_MS}ms`] });
      members.push(memberOf(instance));
    }
    const servedBy = await waitFor(
      async () => {
        const seen = await Promise.all(members.map(async (m) => (await m.instance.request('/ledger/notes')).headers['x-anvil-served-by']));
        return seen.every((s) => typeof s === 'string' && s === seen[0]) ? (seen[0] as string) : null;
      },
      { what: 'the three instances to agree on the owner of ledger', timeoutMs: 15_000 },
    );
    owner = members.find((m) => m.id === servedBy)!;
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
      const reply = await others[i % 2]!.instance.request('/ledger/queue', { method: 'POST', body: '{}', headers: json });
      expect(reply.status, reply.text).toBe(202);
      ids.push(reply.json().id);
    }
    const read = async () => (await others[0]!.instance.request('/ledger/runs')).json() as Array<{ job: string; by: string }>;
    await waitFor(async () => (await read()).length >= 20, { what: '20 job runs in the owner\'s database', timeoutMs: 60_000 });
    // Time for a second run of any of them to show.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const runs = await read();
    expect(runs.map((r) => r.job).sort()).toEqual([...ids].sort());
    expect(new Set(runs.map((r) => r.by))).toEqual(new Set([owner.url]));
    // The non-owners' workers took some of them (each counts the runs it settled) and had the owner run them.
    const counted = await Promise.all(members.map(completedRuns));
    expect(counted.reduce((a, b) => a + b, 0)).toBe(20);
    expect(counted[members.indexOf(others[0]!)]! + counted[members.indexOf(others[1]!)]!).toBeGreaterThan(0);
  }, 90_000);

  it('delivers a bus call made on a non-owner to the owner: Pull reads and LocalCall writes the owner\'s rows', async () => {
    const written = await owner.instance.request('/ledger/notes', { method: 'POST', body: JSON.stringify({ title: 'by-request' }), headers: json });
    expect(written.json()).toEqual({ by: owner.url });
    for (const caller of others) {
      const reply = await caller.instance.request('/reader/notes');
      expect(reply.status, reply.text).toBe(200);
      // The reader ran where it was called; the ledger it pulled from ran on its owner.
      expect(reply.headers['x-anvil-served-by']).toBeUndefined();
      expect(reply.json()).toEqual({ here: caller.url, got: { by: owner.url, titles: expect.arrayContaining([{ title: 'seed' }, { title: 'by-request' }]) } });

      const title = `over-the-bus-from-${caller.id}`;
      const call = await caller.instance.request('/reader/notes', { method: 'POST', body: JSON.stringify({ title }), headers: json });
      expect(call.status, call.text).toBe(200);
      expect(call.json()).toEqual({ by: owner.url });
      const onOwner = (await owner.instance.request('/ledger/notes')).json();
      expect(onOwner.titles).toContainEqual({ title });
    }
  });
});
