import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedJobQueue, embeddedQueueFile } from '../../src/front/jobs/embedded-queue.js';
import type { JobInfo, QueueConsumerOptions, RunResult } from '../../src/front/jobs/job-queue.js';
import { openJobQueue } from '../../src/front/jobs/open-queue.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { eventually, jobQueueContract } from './queue-contract.js';

const temp = useTempDir('anvil-jobs-');

jobQueueContract('embedded (SQLite)', async () => EmbeddedJobQueue.open({ dataDir: temp.path() }));

describe('embedded job queue', () => {
  const opened: EmbeddedJobQueue[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((queue) => queue.close(50)));
  });
  const keep = (queue: EmbeddedJobQueue): EmbeddedJobQueue => {
    opened.push(queue);
    return queue;
  };
  const inspect = <T>(file: string, read: (db: Database.Database) => T): T => {
    const db = new Database(file, { readonly: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  };
  /**
   * Waits until the consumer has read the clock twice more: with no run in flight only its poll
   * reads it, once per round, so one whole poll (claim and start included) saw the time set last.
   */
  const polledTwice = async (reads: () => number): Promise<void> => {
    const from = reads();
    await eventually(() => reads() >= from + 2);
  };
  const consumer = (overrides: Partial<QueueConsumerOptions> = {}): QueueConsumerOptions => ({
    concurrency: 4,
    perApi: 4,
    retries: 3,
    backoffMs: 100,
    leaseMs: 1000,
    ...overrides,
  });

  it('is <dataDir>/.anvil/jobs.sqlite in WAL mode, opened by openJobQueue without a Redis URL', async () => {
    const queue = await openJobQueue({ dataDir: temp.path() });
    try {
      expect(queue).toBeInstanceOf(EmbeddedJobQueue);
      await queue.add({ api: 'localhost/dev/users', payload: 'x', delayMs: 0 });
      const file = join(temp.path(), '.anvil', 'jobs.sqlite');
      expect(embeddedQueueFile(temp.path())).toBe(file);
      expect(existsSync(file)).toBe(true);
      expect(inspect(file, (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
      expect(inspect(file, (db) => (db.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n)).toBe(1);
      const indexes = inspect(file, (db) =>
        (
          db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs'`).all() as Array<{
            name: string;
          }>
        ).map((r) => r.name),
      );
      expect(indexes).toEqual(expect.arrayContaining(['jobs_due', 'jobs_api_due', 'jobs_api_state', 'jobs_lease']));
    } finally {
      await queue.close();
    }
  });

  it('ids sort by creation time', async () => {
    let now = 1_700_000_000_000;
    const queue = keep(EmbeddedJobQueue.open({ dataDir: temp.path(), now: () => now }));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await queue.add({ api: 'a', payload: String(i), delayMs: 0 }));
      now += 1;
    }
    expect([...ids].sort()).toEqual(ids);
  });

  it('backs off exactly backoffMs·2^(attempts-1) on its clock, then fails after 1+retries runs', async () => {
    let now = 1_700_000_000_000;
    let reads = 0;
    const queue = keep(EmbeddedJobQueue.open({ dataDir: temp.path(), now: () => (reads++, now) }));
    const runs: JobInfo[] = [];
    queue.start(async (job) => {
      runs.push(job);
      return { ok: false, error: `e${runs.length}` };
    }, consumer());
    const id = await queue.add({ api: 'a', payload: 'x', delayMs: 0 });
    const start = now;
    let due = start;
    for (const [run, backoff] of [
      [1, 100],
      [2, 200],
      [3, 400],
    ] as const) {
      await eventually(() => runs.length === run);
      await eventually(async () => (await queue.get(id))?.state === 'delayed');
      due += backoff;
      expect(await queue.get(id)).toMatchObject({ state: 'delayed', attempts: run, error: `e${run}`, runAt: due });
      now = due - 1;
      await polledTwice(() => reads);
      expect(runs).toHaveLength(run); // one ms early: not due
      now = due;
    }
    await eventually(async () => (await queue.get(id))?.state === 'failed');
    expect(runs.map((r) => r.attempts)).toEqual([1, 2, 3, 4]);
    expect(await queue.get(id)).toMatchObject({ state: 'failed', attempts: 4, error: 'e4', finishedAt: now });
  });

  it("refuses a job that would make the payloads of its API's queued jobs pass maxQueuedBytes (503, retry later, nothing stored); finished jobs and other APIs do not count", async () => {
    const queue = keep(EmbeddedJobQueue.open({ dataDir: temp.path() }));
    const quota = { maxPayloadBytes: 100, maxQueued: 100, maxQueuedBytes: 10 };
    await queue.add({ api: 'a', payload: 'éééé', delayMs: 60_000 }, quota); // 8 bytes
    await expect(queue.add({ api: 'a', payload: 'abc', delayMs: 0 }, quota)).rejects.toMatchObject({
      status: 503,
      code: 'ANVIL_ERR_QUOTA_QUEUED_JOB_BYTES',
      retryAfterSeconds: 5,
      message: expect.stringMatching(
        /would make the payloads of the API's jobs queued and not finished 11 bytes, over its quota of 10 bytes/,
      ),
    });
    expect(await queue.add({ api: 'a', payload: 'ab', delayMs: 60_000 }, quota)).toMatch(/^j-/);
    expect(await queue.add({ api: 'b', payload: 'abcdefghij', delayMs: 60_000 }, quota)).toMatch(/^j-/);
    expect(await queue.counts('a')).toMatchObject({ delayed: 2 });
    expect(await queue.flush('a')).toBe(2);
    expect(await queue.add({ api: 'a', payload: 'abcdefghij', delayMs: 0 }, quota)).toMatch(/^j-/);
    await expect(
      queue.add({ api: 'a', payload: 'x', delayMs: 0 }, { ...quota, maxQueuedBytes: 0 }),
    ).rejects.toMatchObject({ code: 'ANVIL_ERR_JOBS_BAD_ARGUMENT' });
  });

  it('keeps the newest keepCompleted completed jobs of each API', async () => {
    let now = 1_700_000_000_000;
    const queue = keep(EmbeddedJobQueue.open({ dataDir: temp.path(), now: () => now++, keepCompleted: 3 }));
    const finished: string[] = [];
    queue.start(
      async (job) => {
        finished.push(job.id);
        return { ok: true };
      },
      consumer({ concurrency: 1 }),
    );
    const a: string[] = [];
    for (let i = 0; i < 6; i++) a.push(await queue.add({ api: 'a', payload: String(i), delayMs: 0 }));
    const b = await queue.add({ api: 'b', payload: 'b', delayMs: 0 });
    await eventually(() => finished.length === 7);
    await eventually(async () => (await queue.counts('a')).completed === 3);
    expect(await queue.counts('b')).toMatchObject({ completed: 1 });
    const lastThree = finished.filter((id) => id !== b).slice(-3);
    for (const id of a) expect((await queue.get(id)) !== null).toBe(lastThree.includes(id));
  });

  it('at start, recovers jobs whose lease ran out (their consumer died) and runs them again', async () => {
    let now = 1_700_000_000_000;
    const first = EmbeddedJobQueue.open({ dataDir: temp.path(), now: () => now });
    first.start(() => new Promise<RunResult>(() => {}), consumer({ leaseMs: 10_000 }));
    const id = await first.add({ api: 'a', payload: 'x', delayMs: 0 });
    await eventually(async () => (await first.get(id))?.state === 'active');
    await first.close(0);
    expect(
      inspect(embeddedQueueFile(temp.path()), (db) => db.prepare('SELECT state, lease_until FROM jobs').get()),
    ).toEqual({ state: 'active', lease_until: now + 10_000 });

    let reads = 0;
    const second = keep(EmbeddedJobQueue.open({ dataDir: temp.path(), now: () => (reads++, now) }));
    const seen: JobInfo[] = [];
    second.start(
      async (job) => {
        seen.push(job);
        return { ok: true };
      },
      consumer({ leaseMs: 10_000 }),
    );
    await polledTwice(() => reads);
    expect(seen).toHaveLength(0); // the lease still holds
    now += 10_000;
    await eventually(async () => (await second.get(id))?.state === 'completed');
    expect(seen.map((job) => job.attempts)).toEqual([2]);
  });

  it('a finish that lost its claim is not written', async () => {
    const now = 1_700_000_000_000;
    const queue = keep(EmbeddedJobQueue.open({ dataDir: temp.path(), now: () => now }));
    const releases: Array<(result: RunResult) => void> = [];
    queue.start(() => new Promise<RunResult>((resolve) => releases.push(resolve)), consumer({ concurrency: 1 }));
    const id = await queue.add({ api: 'a', payload: 'x', delayMs: 0 });
    await eventually(async () => (await queue.get(id))?.state === 'active');
    // The claim is taken from under the run (a second consumer, a manual edit), then requeued.
    const writer = new Database(queue.file);
    writer.prepare(`UPDATE jobs SET state = 'failed', error = 'manual' WHERE id = ?`).run(id);
    writer.close();
    expect(await queue.requeueFailed()).toBe(1);
    releases[0]!({ ok: true }); // the old run ends: its result belongs to a claim that is gone
    await eventually(() => releases.length === 2); // the requeued job is claimed anew
    expect(await queue.get(id)).toMatchObject({ state: 'active', attempts: 1, error: null, finishedAt: null });
    releases[1]!({ ok: false, error: 'second' });
    await eventually(async () => (await queue.get(id))?.state === 'delayed');
    expect(await queue.get(id)).toMatchObject({ attempts: 1, error: 'second' });
  });

  it('validates its options', () => {
    expect(() => EmbeddedJobQueue.open({ dataDir: '' })).toThrow(/dataDir must be a non-empty path/);
    expect(() => EmbeddedJobQueue.open({ dataDir: temp.path(), pollMs: 0 })).toThrow(/pollMs must be an integer >= 1/);
  });
});
