import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BullJobQueue } from '../../src/front/jobs/bullmq-queue.js';
import type { JobQueue } from '../../src/front/jobs/job-queue.js';
import { openJobQueue } from '../../src/front/jobs/open-queue.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { eventually, jobQueueContract } from './queue-contract.js';

// Needs a running Redis: REDIS_URL, else redis://127.0.0.1:6379. When it cannot be reached every
// test FAILS (never skips). Every test uses a queue of its own under a prefix of this run, whose
// keys are deleted afterwards.

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `anvil-test-${randomUUID().slice(0, 12)}`;
const shownUrl = redisUrl.replace(/\/\/[^@/]*@/, '//***@');
const temp = useTempDir('anvil-jobs-redis-');
let admin: Redis;
let queueName = '';
let tests = 0;

async function keysUnder(pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

async function connectAdmin(): Promise<void> {
  admin = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  admin.on('error', () => {});
  try {
    await admin.connect();
    await admin.ping();
  } catch (error) {
    throw new Error(
      `the BullMQ job queue tests need a Redis at ${shownUrl} (set REDIS_URL): ${(error as Error).message}`,
    );
  }
}

// Checked before every test, so that without Redis each test FAILS with this message (a failing
// beforeAll would only mark them skipped).
let reachable: Promise<void> | undefined;
beforeEach(async () => {
  reachable ??= connectAdmin();
  await reachable;
  queueName = `q${++tests}`;
});

afterAll(async () => {
  if (admin?.status !== 'ready') return;
  const keys = await keysUnder(`${prefix}:*`);
  for (let i = 0; i < keys.length; i += 500) await admin.del(...keys.slice(i, i + 500));
  await admin.quit();
});

jobQueueContract('BullMQ (Redis)', async () => BullJobQueue.open({ redisUrl, prefix, queueName }));

describe('BullMQ job queue', () => {
  const opened: JobQueue[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((queue) => queue.close(50)));
  });
  const open = async (): Promise<BullJobQueue> => {
    const queue = await BullJobQueue.open({ redisUrl, prefix, queueName });
    opened.push(queue);
    return queue;
  };
  /** A plain BullMQ Queue on the test's queue, to look at what BullMQ stored. */
  const withBull = async <T>(look: (queue: Queue) => Promise<T>): Promise<T> => {
    const connection = admin.duplicate();
    const queue = new Queue(queueName, { connection, prefix });
    try {
      return await look(queue);
    } finally {
      await queue.close();
      await connection.quit();
    }
  };

  it('is opened by openJobQueue with a Redis URL, keys under <prefix>:<queue>:, and no SQLite file', async () => {
    const queue = await openJobQueue({ dataDir: temp.path(), redisUrl, prefix: `${prefix}:`, queueName });
    opened.push(queue);
    expect(queue).toBeInstanceOf(BullJobQueue);
    expect(queue).toMatchObject({ prefix, queueName });
    const id = await queue.add({ api: 'localhost/dev/users', payload: '{"a":1}', delayMs: 0 });
    expect(await keysUnder(`${prefix}:${queueName}:*`)).toContain(`${prefix}:${queueName}:${id}`);
    expect(existsSync(join(temp.path(), '.anvil', 'jobs.sqlite'))).toBe(false);
  });

  it('a job is a BullMQ job: our id, name = API, data {api, payload}, kept on failure, 1000 completed kept', async () => {
    const queue = await open();
    const id = await queue.add({ api: 'localhost/dev/users', payload: '{"a":1}', delayMs: 250 });
    await withBull(async (raw) => {
      const job = (await Job.fromId(raw, id))!;
      expect(job.id).toBe(id);
      expect(job.name).toBe('localhost/dev/users');
      expect(job.data).toEqual({ api: 'localhost/dev/users', payload: '{"a":1}' });
      expect(job.opts).toMatchObject({
        delay: 250,
        removeOnComplete: { count: 1000 },
        removeOnFail: false,
        backoff: { type: 'anvil' },
      });
      expect(await job.getState()).toBe('delayed');
    });
  });

  it('a job waiting for its API’s turn is moved to delayed, not failed, and costs no attempt', async () => {
    const queue = await open();
    const release: Array<() => void> = [];
    queue.start(() => new Promise((resolve) => release.push(() => resolve({ ok: true }))), {
      concurrency: 2,
      perApi: 1,
      retries: 0,
      backoffMs: 10,
      leaseMs: 5000,
    });
    const first = await queue.add({ api: 'a', payload: '1', delayMs: 0 });
    const second = await queue.add({ api: 'a', payload: '2', delayMs: 0 });
    await eventually(() => release.length === 1);
    await eventually(async () => (await queue.get(second))?.state === 'delayed');
    expect(await queue.get(first)).toMatchObject({ state: 'active', attempts: 1 });
    expect(await queue.get(second)).toMatchObject({ attempts: 0, error: null });
    release[0]!();
    await eventually(() => release.length === 2);
    release[1]!();
    await eventually(async () => (await queue.get(second))?.state === 'completed');
    expect(await queue.get(second)).toMatchObject({ attempts: 1, error: null });
  });

  it('a backlog of one API drains without churning: few deferrals per job', async () => {
    const queue = await open();
    const order: string[] = [];
    queue.start(
      async (job) => {
        order.push(job.payload);
        await new Promise((resolve) => setTimeout(resolve, 20)); // a run that takes real time: the backlog waits its turn
        return { ok: true };
      },
      { concurrency: 4, perApi: 1, retries: 0, backoffMs: 10, leaseMs: 5000 },
    );
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await queue.add({ api: 'a', payload: String(i), delayMs: 0 }));
    await eventually(async () => (await queue.counts('a')).completed === 30, 20_000);
    // attemptsStarted counts every fetch, deferrals included; attempts (ours) only runs.
    const fetches = await withBull(async (raw) => {
      let total = 0;
      for (const id of ids) total += (await Job.fromId(raw, id))!.attemptsStarted;
      return total;
    });
    expect(fetches - 30).toBeLessThan(30 * 2); // in practice one each: the first burst, then promotions
    for (const id of ids) expect(await queue.get(id)).toMatchObject({ state: 'completed', attempts: 1 });
  });

  it('a full quota heals a count that drifted: ids of finished jobs and of long-vanished ones are dropped', async () => {
    const queue = await open();
    const api = 'localhost/dev/drift';
    const pending = `${prefix}:${queueName}:anvil-pending:${api}`;
    const quota = { maxPayloadBytes: 100, maxQueued: 2 };
    queue.start(async () => ({ ok: true }), { concurrency: 1, perApi: 1, retries: 0, backoffMs: 10, leaseMs: 5000 });
    const done = await queue.add({ api, payload: 'done', delayMs: 0 }, quota);
    await eventually(async () => (await queue.get(done))?.state === 'completed');
    // As if both removals had been lost: a finished job, and an id whose job never came (1970).
    await admin.sadd(pending, done, 'j-000000001-0000000000');
    expect(await admin.scard(pending)).toBe(2);
    expect(await queue.add({ api, payload: 'x', delayMs: 60_000 }, quota)).toMatch(/^j-/);
    expect(await admin.smembers(pending)).toHaveLength(1);
  });

  it('perApi holds across queues sharing a Redis (several instances): one run of an API at a time in all, each job once', async () => {
    const queues = [await open(), await open(), await open()];
    let running = 0;
    let maxRunning = 0;
    const runs: string[] = [];
    for (const queue of queues) {
      queue.start(
        async (job) => {
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          await new Promise((resolve) => setTimeout(resolve, 30)); // a run that takes real time, so that two at once would overlap
          running -= 1;
          runs.push(job.payload);
          return { ok: true };
        },
        { concurrency: 4, perApi: 1, retries: 0, backoffMs: 10, leaseMs: 5000 },
      );
    }
    const ids: string[] = [];
    for (let i = 0; i < 12; i++)
      ids.push(await queues[i % 3]!.add({ api: 'localhost/dev/shared', payload: String(i), delayMs: 0 }));
    await eventually(async () => (await queues[0]!.counts('localhost/dev/shared')).completed === 12, 20_000);
    expect(maxRunning).toBe(1);
    expect([...runs].sort()).toEqual(Array.from({ length: 12 }, (_, i) => String(i)).sort());
    // Every slot was given back, and no deferral is left behind.
    expect(await admin.zcard(`${prefix}:${queueName}:anvil-runs:localhost/dev/shared`)).toBe(0);
  });

  it('a run slot held by a dead instance lapses after the lease: the API’s next job runs', async () => {
    const queue = await open();
    // As if an instance had died holding the API's only slot for another job.
    await admin.zadd(`${prefix}:${queueName}:anvil-runs:localhost/dev/orphan`, Date.now() + 400, 'j-dead');
    const started: number[] = [];
    queue.start(
      async () => {
        started.push(Date.now());
        return { ok: true };
      },
      { concurrency: 1, perApi: 1, retries: 0, backoffMs: 10, leaseMs: 5000 },
    );
    const before = Date.now();
    const id = await queue.add({ api: 'localhost/dev/orphan', payload: 'x', delayMs: 0 });
    await eventually(async () => (await queue.get(id))?.state === 'completed', 10_000);
    expect(started).toHaveLength(1);
    expect(started[0]! - before).toBeGreaterThanOrEqual(300);
    expect(await queue.get(id)).toMatchObject({ attempts: 1 });
  });

  it('openJobQueue rejects with a clear 503 when Redis cannot be reached, without the password', async () => {
    const started = Date.now();
    const error = await openJobQueue({
      dataDir: temp.path(),
      redisUrl: 'redis://user:s3cret@127.0.0.1:1',
      prefix,
      queueName,
    }).then(
      () => undefined,
      (e: unknown) => e as Error & { code: string; status: number },
    );
    expect(error).toMatchObject({ code: 'ANVIL_ERR_JOBS_UNAVAILABLE', status: 503 });
    expect(error?.message).toMatch(
      /job queue unavailable: cannot reach Redis at redis:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:1/,
    );
    expect(error?.message).not.toContain('s3cret');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
