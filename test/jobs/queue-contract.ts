import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobInfo, JobQueue, QueueConsumerOptions, RunResult } from '../../src/front/jobs/job-queue.js';

/** Polls `check` until it holds (or throws the last failure after `timeoutMs`). */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5000, stepMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await check();
      if (value !== false) return value;
      if (Date.now() > deadline) throw new Error('condition still false');
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await sleep(stepMs);
  }
}

/** A promise with its resolve, to hold a run until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const ZERO = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0 };
const OK: RunResult = { ok: true };

/**
 * The contract every JobQueue keeps; the embedded and the BullMQ test files both call it.
 *
 * `makeQueue` opens a NEW queue instance (its own connection) on the store of the current test:
 * the same SQLite file / the same Redis queue for every call within a test, a fresh one for each
 * test. The contract closes every queue it opened after each test (without waiting long for runs
 * that never end). Timings are real: delays and backoffs are tens of ms.
 */
export function jobQueueContract(name: string, makeQueue: () => Promise<JobQueue>): void {
  describe(`JobQueue contract: ${name}`, () => {
    let opened: JobQueue[] = [];
    let api = '';
    let tests = 0;
    beforeEach(() => {
      api = `localhost/dev/t${++tests}-${randomUUID().slice(0, 6)}`;
    });
    afterEach(async () => {
      const closing = opened;
      opened = [];
      await Promise.all(closing.map((queue) => queue.close(50)));
    });

    const open = async (): Promise<JobQueue> => {
      const queue = await makeQueue();
      opened.push(queue);
      return queue;
    };
    const options = (overrides: Partial<QueueConsumerOptions> = {}): QueueConsumerOptions => ({
      concurrency: 4,
      perApi: 4,
      retries: 0,
      backoffMs: 20,
      leaseMs: 5000,
      ...overrides,
    });
    const stateOf = async (queue: JobQueue, id: string) => (await queue.get(id))?.state;

    describe('add and run', () => {
      it('runs an added job with its payload, then it is completed', async () => {
        const queue = await open();
        const seen: JobInfo[] = [];
        queue.start(async (job) => {
          seen.push(job);
          return OK;
        }, options());
        const before = Date.now();
        const id = await queue.add({ api, payload: '{"memory":{"a":1}}', delayMs: 0 });
        expect(id).toMatch(/^j-[0-9a-z]+-[0-9a-f]+$/);
        await eventually(async () => (await stateOf(queue, id)) === 'completed');
        expect(seen).toHaveLength(1);
        expect(seen[0]).toMatchObject({
          id,
          api,
          state: 'active',
          payload: '{"memory":{"a":1}}',
          attempts: 1,
          error: null,
          finishedAt: null,
        });
        const done = await queue.get(id);
        expect(done).toMatchObject({
          id,
          api,
          state: 'completed',
          payload: '{"memory":{"a":1}}',
          attempts: 1,
          error: null,
        });
        expect(done!.createdAt).toBeGreaterThanOrEqual(before - 5);
        expect(done!.finishedAt).toBeGreaterThanOrEqual(done!.createdAt);
        expect(await queue.counts(api)).toEqual({ ...ZERO, completed: 1 });
      });

      it('gives every job its own id', async () => {
        const queue = await open();
        const ids = await Promise.all(Array.from({ length: 50 }, () => queue.add({ api, payload: 'x', delayMs: 0 })));
        expect(new Set(ids).size).toBe(50);
      });

      it('honours the delay: not run before delayMs, run after', async () => {
        const queue = await open();
        const ranAt: number[] = [];
        queue.start(async () => {
          ranAt.push(Date.now());
          return OK;
        }, options());
        const before = Date.now();
        const id = await queue.add({ api, payload: 'later', delayMs: 300 });
        const delayed = await queue.get(id);
        expect(delayed?.state).toBe('delayed');
        expect(delayed!.runAt).toBeGreaterThanOrEqual(before + 300);
        expect(delayed!.runAt).toBeLessThanOrEqual(Date.now() + 300);
        expect(ranAt).toHaveLength(0);
        await eventually(async () => (await stateOf(queue, id)) === 'completed');
        expect(ranAt).toHaveLength(1);
        // Not run before delayMs: the run itself says when it began.
        expect(ranAt[0]!).toBeGreaterThanOrEqual(before + 300);
      });

      it('a run that throws is a failed run, with the thrown message as the error', async () => {
        const queue = await open();
        queue.start(
          async () => {
            throw new Error('kaboom');
          },
          options({ retries: 0 }),
        );
        const id = await queue.add({ api, payload: 'x', delayMs: 0 });
        await eventually(async () => (await stateOf(queue, id)) === 'failed');
        expect(await queue.get(id)).toMatchObject({ state: 'failed', attempts: 1, error: 'kaboom' });
      });
    });

    describe('retries', () => {
      it('retries a failing run with growing backoff, then keeps it failed with the last error', async () => {
        const queue = await open();
        const ranAt: number[] = [];
        const attempts: number[] = [];
        queue.start(
          async (job) => {
            ranAt.push(Date.now());
            attempts.push(job.attempts);
            return { ok: false, error: `boom ${ranAt.length}` };
          },
          options({ retries: 3, backoffMs: 40 }),
        );
        const id = await queue.add({ api, payload: 'x', delayMs: 0 });
        await eventually(async () => (await stateOf(queue, id)) === 'failed');
        // A real-time quiet window: a run after the job failed (none must come) would show here.
        await sleep(200);
        expect(ranAt).toHaveLength(4);
        expect(attempts).toEqual([1, 2, 3, 4]);
        const gaps = ranAt.slice(1).map((t, i) => t - ranAt[i]!);
        // backoffMs · 2^(n-1): 40, 80, 160 (a few ms of timer slack)
        gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(40 * 2 ** i - 5));
        expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
        const failed = await queue.get(id);
        expect(failed).toMatchObject({ state: 'failed', attempts: 4, error: 'boom 4' });
        expect(failed!.finishedAt).toBeGreaterThanOrEqual(ranAt[3]!);
        expect(await queue.counts(api)).toEqual({ ...ZERO, failed: 1 });
      });

      it('a job read while its runs end shows the counters of the state it is shown in', async () => {
        const queue = await open();
        const retries = 8;
        queue.start(async () => ({ ok: false, error: 'no' }), options({ retries, backoffMs: 5 }));
        const id = await queue.add({ api, payload: 'x', delayMs: 0 });
        const seen: JobInfo[] = [];
        // Several readers with no pause but a turn of the event loop (a queue that reads
        // synchronously would otherwise never let its runs happen), so reads meet each run's end.
        const read = async () => {
          for (;;) {
            const job = await queue.get(id);
            if (job) seen.push(job);
            if (job?.state === 'failed') return;
            await new Promise(setImmediate);
          }
        };
        await Promise.all([read(), read(), read(), read()]);
        const failed = seen.filter((job) => job.state === 'failed');
        expect(failed.length).toBeGreaterThanOrEqual(3);
        for (const job of failed) expect(job).toMatchObject({ attempts: retries + 1, error: 'no' });
        for (const job of seen.filter((each) => each.state === 'delayed')) {
          expect(job.attempts).toBeGreaterThanOrEqual(1);
          expect(job.error).toBe('no');
        }
      });

      it('a job waiting for its retry is delayed, with the error of the failed run', async () => {
        const queue = await open();
        let runs = 0;
        queue.start(
          async () => (++runs === 1 ? { ok: false, error: 'first' } : OK),
          options({ retries: 1, backoffMs: 400 }),
        );
        const id = await queue.add({ api, payload: 'x', delayMs: 0 });
        await eventually(async () => (await stateOf(queue, id)) === 'delayed');
        const waiting = await queue.get(id);
        expect(waiting).toMatchObject({ state: 'delayed', attempts: 1, error: 'first' });
        expect(waiting!.runAt).toBeGreaterThan(Date.now());
        await eventually(async () => (await stateOf(queue, id)) === 'completed');
        expect(await queue.get(id)).toMatchObject({ attempts: 2 });
      });

      it('requeueFailed brings failed jobs back (of one API, or all) with their attempts reset, and they run again', async () => {
        const queue = await open();
        let failing = true;
        const runs: string[] = [];
        queue.start(
          async (job) => {
            runs.push(job.id);
            return failing ? { ok: false, error: 'down' } : OK;
          },
          options({ retries: 1, backoffMs: 10 }),
        );
        const a = await queue.add({ api, payload: 'a', delayMs: 0 });
        const b = await queue.add({ api: `${api}-other`, payload: 'b', delayMs: 0 });
        await eventually(async () => (await stateOf(queue, a)) === 'failed' && (await stateOf(queue, b)) === 'failed');
        expect(await queue.get(a)).toMatchObject({ attempts: 2, error: 'down' });
        expect(await queue.requeueFailed(`${api}-nobody`)).toBe(0);

        failing = false;
        expect(await queue.requeueFailed(api)).toBe(1);
        await eventually(async () => (await stateOf(queue, a)) === 'completed');
        expect(await queue.get(a)).toMatchObject({ state: 'completed', attempts: 1 });
        expect(await stateOf(queue, b)).toBe('failed');

        expect(await queue.requeueFailed()).toBe(1);
        await eventually(async () => (await stateOf(queue, b)) === 'completed');
        expect(runs.filter((id) => id === a)).toHaveLength(3);
        expect(runs.filter((id) => id === b)).toHaveLength(3);
        expect(await queue.requeueFailed()).toBe(0);
      });
    });

    describe('get and counts', () => {
      it('reflect waiting and delayed jobs, per API and in all', async () => {
        const queue = await open();
        const other = `${api}-other`;
        const before = Date.now();
        const w1 = await queue.add({ api, payload: 'w1', delayMs: 0 });
        const d1 = await queue.add({ api, payload: 'd1', delayMs: 60_000 });
        await queue.add({ api: other, payload: 'w2', delayMs: 0 });
        const after = Date.now();
        const waiting = await queue.get(w1);
        expect(waiting).toMatchObject({
          id: w1,
          api,
          state: 'waiting',
          payload: 'w1',
          attempts: 0,
          error: null,
          finishedAt: null,
        });
        expect(waiting!.createdAt).toBeGreaterThanOrEqual(before - 5);
        expect(waiting!.createdAt).toBeLessThanOrEqual(after + 5);
        expect(waiting!.runAt).toBeLessThanOrEqual(Date.now());
        const delayed = await queue.get(d1);
        expect(delayed).toMatchObject({ state: 'delayed', attempts: 0 });
        expect(delayed!.runAt - delayed!.createdAt).toBeGreaterThanOrEqual(60_000);
        expect(delayed!.runAt - delayed!.createdAt).toBeLessThan(60_050);
        expect(await queue.get('j-nothing-here')).toBeNull();
        expect(await queue.get('')).toBeNull();
        expect(await queue.counts(api)).toEqual({ ...ZERO, waiting: 1, delayed: 1 });
        expect(await queue.counts(other)).toEqual({ ...ZERO, waiting: 1 });
        expect(await queue.counts(`${api}-nobody`)).toEqual(ZERO);
        expect(await queue.counts()).toEqual({ ...ZERO, waiting: 2, delayed: 1 });
      });

      it('reflect active, completed and failed jobs', async () => {
        const queue = await open();
        const hold = gate();
        const started = new Set<string>();
        queue.start(async (job) => {
          started.add(job.payload);
          if (job.payload === 'slow') await hold.promise;
          return job.payload === 'bad' ? { ok: false, error: 'bad payload' } : OK;
        }, options());
        const good = await queue.add({ api, payload: 'good', delayMs: 0 });
        const bad = await queue.add({ api, payload: 'bad', delayMs: 0 });
        const slow = await queue.add({ api, payload: 'slow', delayMs: 0 });
        await eventually(
          async () =>
            started.has('slow') &&
            (await stateOf(queue, good)) === 'completed' &&
            (await stateOf(queue, bad)) === 'failed',
        );
        const active = await queue.get(slow);
        expect(active).toMatchObject({ state: 'active', attempts: 1, finishedAt: null });
        expect(await queue.get(bad)).toMatchObject({ state: 'failed', attempts: 1, error: 'bad payload' });
        expect(await queue.counts(api)).toEqual({ ...ZERO, active: 1, completed: 1, failed: 1 });
        expect(await queue.counts()).toEqual({ ...ZERO, active: 1, completed: 1, failed: 1 });
        hold.open();
        await eventually(async () => (await stateOf(queue, slow)) === 'completed');
        expect(await queue.counts()).toEqual({ ...ZERO, completed: 2, failed: 1 });
      });
    });

    describe('flush', () => {
      it('removes the waiting and delayed jobs of one API and leaves the other APIs’ jobs', async () => {
        const queue = await open();
        const other = `${api}-other`;
        await queue.add({ api, payload: '1', delayMs: 0 });
        await queue.add({ api, payload: '2', delayMs: 0 });
        await queue.add({ api, payload: '3', delayMs: 60_000 });
        const kept = await queue.add({ api: other, payload: '4', delayMs: 0 });
        await queue.add({ api: other, payload: '5', delayMs: 60_000 });
        expect(await queue.flush(`${api}-nobody`)).toBe(0);
        expect(await queue.flush(api)).toBe(3);
        expect(await queue.counts(api)).toEqual(ZERO);
        expect(await queue.counts(other)).toEqual({ ...ZERO, waiting: 1, delayed: 1 });
        expect(await stateOf(queue, kept)).toBe('waiting');
        expect(await queue.flush()).toBe(2);
        expect(await queue.counts()).toEqual(ZERO);
        expect(await queue.get(kept)).toBeNull();
      });

      it('removes completed and failed jobs too, never an active one', async () => {
        const queue = await open();
        const other = `${api}-other`;
        const hold = gate();
        queue.start(async (job) => {
          if (job.payload === 'slow') await hold.promise;
          return job.payload === 'bad' ? { ok: false, error: 'no' } : OK;
        }, options());
        const good = await queue.add({ api, payload: 'good', delayMs: 0 });
        const bad = await queue.add({ api, payload: 'bad', delayMs: 0 });
        const slow = await queue.add({ api, payload: 'slow', delayMs: 0 });
        const otherGood = await queue.add({ api: other, payload: 'good', delayMs: 0 });
        await eventually(
          async () =>
            (await stateOf(queue, good)) === 'completed' &&
            (await stateOf(queue, bad)) === 'failed' &&
            (await stateOf(queue, slow)) === 'active' &&
            (await stateOf(queue, otherGood)) === 'completed',
        );
        expect(await queue.flush(api)).toBe(2);
        expect(await queue.get(good)).toBeNull();
        expect(await queue.get(bad)).toBeNull();
        expect(await stateOf(queue, slow)).toBe('active');
        expect(await stateOf(queue, otherGood)).toBe('completed');
        hold.open();
        await eventually(async () => (await stateOf(queue, slow)) === 'completed');
        expect(await queue.flush()).toBe(2);
        expect(await queue.counts()).toEqual(ZERO);
      });
    });

    describe('limits', () => {
      it('perApi=1: never two runs of an API at once, and another API’s job is not stuck behind them', async () => {
        const queue = await open();
        const busy = `${api}-busy`;
        const quiet = `${api}-quiet`;
        let running = 0;
        let maxRunning = 0;
        const finished: string[] = [];
        queue.start(
          async (job) => {
            if (job.api === busy) {
              running += 1;
              maxRunning = Math.max(maxRunning, running);
            }
            await sleep(60); // a run that takes real time, so that two at once would overlap
            if (job.api === busy) running -= 1;
            finished.push(job.payload);
            return OK;
          },
          options({ concurrency: 4, perApi: 1 }),
        );
        const ids: string[] = [];
        for (let i = 1; i <= 5; i++) ids.push(await queue.add({ api: busy, payload: `A${i}`, delayMs: 0 }));
        ids.push(await queue.add({ api: quiet, payload: 'B', delayMs: 0 }));
        await eventually(async () => finished.length === 6, 10_000);
        expect(maxRunning).toBe(1);
        // B finished before the last of A's: it did not wait for the whole backlog.
        const lastA = Math.max(...['A1', 'A2', 'A3', 'A4', 'A5'].map((p) => finished.indexOf(p)));
        expect(finished.indexOf('B')).toBeLessThan(lastA);
        // waiting for its API's turn is not a run
        for (const id of ids) expect(await queue.get(id)).toMatchObject({ state: 'completed', attempts: 1 });
      });

      it('concurrency: never more runs at once than allowed, in all', async () => {
        const queue = await open();
        let running = 0;
        let maxRunning = 0;
        let done = 0;
        queue.start(
          async () => {
            running += 1;
            maxRunning = Math.max(maxRunning, running);
            await sleep(40); // a run that takes real time, so that runs at once would overlap
            running -= 1;
            done += 1;
            return OK;
          },
          options({ concurrency: 2, perApi: 2 }),
        );
        for (let i = 0; i < 8; i++) await queue.add({ api: `${api}-${i % 3}`, payload: String(i), delayMs: 0 });
        await eventually(() => done === 8, 10_000);
        expect(maxRunning).toBe(2);
      });
    });

    describe('quota per API', () => {
      it('refuses a payload over maxPayloadBytes (UTF-8 bytes) with 413 naming the limit, and takes one at the limit', async () => {
        const queue = await open();
        const quota = { maxPayloadBytes: 10, maxQueued: 100 };
        // 'é' is two bytes: 5 of them are 10 bytes, at the limit.
        expect(await queue.add({ api, payload: 'ééééé', delayMs: 0 }, quota)).toMatch(/^j-/);
        await expect(queue.add({ api, payload: 'ééééé!', delayMs: 0 }, quota)).rejects.toMatchObject({
          code: 'ANVIL_ERR_QUOTA_JOB_PAYLOAD',
          status: 413,
          message: expect.stringMatching(/the job is 11 bytes, over this API's job payload quota of 10 bytes/),
        });
        expect(await queue.counts(api)).toEqual({ ...ZERO, waiting: 1 });
      });

      it('refuses a job once maxQueued jobs of the API are waiting, delayed or running (503, retry later); other APIs are not counted', async () => {
        const queue = await open();
        const other = `${api}-other`;
        const quota = { maxPayloadBytes: 1000, maxQueued: 3 };
        const hold = gate();
        queue.start(
          async (job) => {
            if (job.payload === 'slow') await hold.promise;
            return OK;
          },
          options({ perApi: 1 }),
        );
        const slow = await queue.add({ api, payload: 'slow', delayMs: 0 }, quota);
        await eventually(async () => (await stateOf(queue, slow)) === 'active');
        await queue.add({ api, payload: 'later', delayMs: 60_000 }, quota);
        await queue.add({ api, payload: 'next', delayMs: 0 }, quota);
        await expect(queue.add({ api, payload: 'one too many', delayMs: 0 }, quota)).rejects.toMatchObject({
          code: 'ANVIL_ERR_QUOTA_QUEUED_JOBS',
          status: 503,
          retryAfterSeconds: expect.any(Number),
          message: expect.stringMatching(/already has 3 jobs queued and not finished/),
        });
        expect(await queue.add({ api: other, payload: 'theirs', delayMs: 0 }, quota)).toMatch(/^j-/);
        // The running job completes, then the next one: room for two.
        hold.open();
        await eventually(async () => (await queue.counts(api)).completed === 2);
        await queue.add({ api, payload: 'a', delayMs: 60_000 }, quota);
        await queue.add({ api, payload: 'b', delayMs: 60_000 }, quota);
        await expect(queue.add({ api, payload: 'c', delayMs: 0 }, quota)).rejects.toMatchObject({
          code: 'ANVIL_ERR_QUOTA_QUEUED_JOBS',
        });
      });

      it('concurrent adds never pass maxQueued together', async () => {
        const [first, second] = [await open(), await open()];
        const quota = { maxPayloadBytes: 1000, maxQueued: 5 };
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? first : second).add({ api, payload: String(i), delayMs: 60_000 }, quota),
          ),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
        for (const r of results)
          if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'ANVIL_ERR_QUOTA_QUEUED_JOBS' });
        expect(await first.counts(api)).toEqual({ ...ZERO, delayed: 5 });
      });

      it('failed jobs do not count, flushed ones leave room, requeued ones count again', async () => {
        const queue = await open();
        const quota = { maxPayloadBytes: 1000, maxQueued: 2 };
        queue.start(async (job) => (job.payload === 'bad' ? { ok: false, error: 'no' } : OK), options({ retries: 0 }));
        const bad = await queue.add({ api, payload: 'bad', delayMs: 0 }, quota);
        await eventually(async () => (await stateOf(queue, bad)) === 'failed');
        await queue.add({ api, payload: 'x', delayMs: 60_000 }, quota);
        await queue.add({ api, payload: 'y', delayMs: 60_000 }, quota);
        await expect(queue.add({ api, payload: 'z', delayMs: 0 }, quota)).rejects.toMatchObject({
          code: 'ANVIL_ERR_QUOTA_QUEUED_JOBS',
        });
        expect(await queue.flush(api)).toBe(3);
        await queue.add({ api, payload: 'bad', delayMs: 0 }, quota);
        await eventually(async () => (await queue.counts(api)).failed === 1);
        expect(await queue.requeueFailed(api)).toBe(1);
        await queue.add({ api, payload: 'w', delayMs: 60_000 }, quota);
        // The requeued job runs and fails again; until then it counted.
        await eventually(async () => (await queue.counts(api)).failed === 1);
        await queue.add({ api, payload: 'v', delayMs: 60_000 }, quota);
        await expect(queue.add({ api, payload: 'u', delayMs: 0 }, quota)).rejects.toMatchObject({
          code: 'ANVIL_ERR_QUOTA_QUEUED_JOBS',
        });
      });

      it('rejects a bad quota with a coded error', async () => {
        const queue = await open();
        await expect(
          queue.add({ api, payload: 'x', delayMs: 0 }, { maxPayloadBytes: 0, maxQueued: 1 }),
        ).rejects.toMatchObject({ code: 'ANVIL_ERR_JOBS_BAD_ARGUMENT' });
        await expect(
          queue.add({ api, payload: 'x', delayMs: 0 }, { maxPayloadBytes: 1, maxQueued: 1.5 }),
        ).rejects.toMatchObject({ code: 'ANVIL_ERR_JOBS_BAD_ARGUMENT' });
      });
    });

    describe('durability and at least once', () => {
      it('an added job survives closing and reopening before anyone consumed it', async () => {
        const first = await open();
        const id = await first.add({ api, payload: '{"kept":true}', delayMs: 0 });
        const later = await first.add({ api, payload: 'later', delayMs: 60_000 });
        await first.close();
        const second = await open();
        expect(await second.get(id)).toMatchObject({
          id,
          api,
          state: 'waiting',
          payload: '{"kept":true}',
          attempts: 0,
        });
        expect(await second.get(later)).toMatchObject({ state: 'delayed' });
        const seen: string[] = [];
        second.start(async (job) => {
          seen.push(job.payload);
          return OK;
        }, options());
        await eventually(async () => (await stateOf(second, id)) === 'completed');
        expect(seen).toEqual(['{"kept":true}']);
      });

      it('a job whose run was cut by a crash runs again in a new instance (at least once)', async () => {
        const first = await open();
        const started: JobInfo[] = [];
        first.start(
          async (job) => {
            started.push(job);
            return new Promise<RunResult>(() => {}); // never ends: the instance "crashes" mid-run
          },
          options({ leaseMs: 300 }),
        );
        const id = await first.add({ api, payload: 'crash me', delayMs: 0 });
        await eventually(() => started.length === 1);
        await first.close(10); // gives up on the run: no result is ever written
        expect(await (await open()).get(id)).toMatchObject({ state: 'active', attempts: 1 });

        const second = await open();
        const rerun: JobInfo[] = [];
        second.start(
          async (job) => {
            rerun.push(job);
            return OK;
          },
          options({ leaseMs: 300 }),
        );
        await eventually(async () => (await stateOf(second, id)) === 'completed', 10_000);
        expect(rerun).toHaveLength(1);
        expect(rerun[0]).toMatchObject({ id, payload: 'crash me', attempts: 2 });
        expect(await second.get(id)).toMatchObject({ state: 'completed', attempts: 2 });
      });

      it('the lease of a live run is renewed: a run longer than leaseMs is not run twice', async () => {
        const first = await open();
        const second = await open();
        const runs: string[] = [];
        const run = async (job: JobInfo): Promise<RunResult> => {
          runs.push(job.id);
          await sleep(700); // real time: the run outlasts its 150 ms lease several times
          return OK;
        };
        first.start(run, options({ leaseMs: 150 }));
        const id = await first.add({ api, payload: 'long', delayMs: 0 });
        await eventually(() => runs.length === 1);
        second.start(run, options({ leaseMs: 150 }));
        await eventually(async () => (await stateOf(first, id)) === 'completed', 10_000);
        // A real-time quiet window: a second run (the other consumer taking the job over) would show here.
        await sleep(300);
        expect(runs).toEqual([id]);
        expect(await first.get(id)).toMatchObject({ state: 'completed', attempts: 1 });
      });

      it('close waits for the runs in flight, whose results are kept', async () => {
        const first = await open();
        let finished = false;
        first.start(async () => {
          await sleep(150); // a run that takes real time: still in flight when close is called
          finished = true;
          return OK;
        }, options());
        const id = await first.add({ api, payload: 'x', delayMs: 0 });
        await eventually(async () => (await stateOf(first, id)) === 'active');
        await first.close(5000);
        expect(finished).toBe(true);
        await expect(first.add({ api, payload: 'y', delayMs: 0 })).rejects.toMatchObject({
          code: 'ANVIL_ERR_JOBS_CLOSED',
          status: 503,
        });
        expect(await (await open()).get(id)).toMatchObject({ state: 'completed', attempts: 1 });
      });
    });

    describe('arguments', () => {
      it('rejects bad jobs and bad consumer options with coded errors', async () => {
        const queue = await open();
        for (const job of [
          { api: '', payload: 'x', delayMs: 0 },
          { api, payload: 1 as unknown as string, delayMs: 0 },
          { api, payload: 'x', delayMs: -1 },
          { api, payload: 'x', delayMs: Number.NaN },
        ]) {
          await expect(queue.add(job)).rejects.toMatchObject({ code: 'ANVIL_ERR_JOBS_BAD_ARGUMENT', status: 500 });
        }
        expect(() => queue.start(async () => OK, options({ concurrency: 0 }))).toThrow(
          /concurrency must be an integer >= 1/,
        );
        expect(() => queue.start(async () => OK, options({ perApi: 1.5 }))).toThrow(/perApi must be an integer >= 1/);
        queue.start(async () => OK, options());
        expect(() => queue.start(async () => OK, options())).toThrow(/already called/);
      });
    });
  });
}
