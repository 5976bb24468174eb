import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { removeRedisKeys, storeBackends } from '../helpers/store-backends.js';

// Issue 28 item 5 (and issue 25): a job's record. ForTheWorker with `identifier` writes
// {message: "queued", id}; WriteToJob replaces it from the job's flow (or the queuing request's);
// ReadJob reads it, as a directive and as a whole `get /jobs/{id}` endpoint. On the embedded
// queue and store, and on BullMQ and Redis.
const API = `key: reports
debug: true
endpoints:
  post /reports:
    Queue: { directive: ForTheWorker, identifier: true }
    Half: { directive: WriteToJob, value: { state: running, done: 50 } }
    Result: { directive: WriteToJob, value: { state: done, total: $.message.body.n, job: $.id } }
  post /later:
    Queue: { directive: ForTheWorker, identifier: true, delay: 3600 }
    Result: { directive: WriteToJob, value: never written in this test }
  post /failing:
    Queue: { directive: ForTheWorker, identifier: true }
    Fail: { directive: ThrowError, status: 422, message: the input was wrong }
    Record: { directive: WriteToJob, value: { state: failed, why: $.memory.error.message }, groups: [ERROR_FLOW] }
  post /text:
    Queue: { directive: ForTheWorker, identifier: true }
    Result: { directive: WriteToJob, value: just a string }
  post /in-request:
    Queue: { directive: ForTheWorker }
    Accepted: { directive: WriteToJob, value: { state: accepted }, groups: [QUEUE_FLOW] }
    Reply: { directive: ModifyMessage, status: 202, body: { job: $.memory.jobId }, groups: [QUEUE_FLOW] }
  post /no-job:
    Write: { directive: WriteToJob, value: { state: nowhere } }
  post /null-value:
    Queue: { directive: ForTheWorker }
    Write: { directive: WriteToJob, value: $.memory.nothing, groups: [QUEUE_FLOW] }
  get /jobs/{id}:
    Read: { directive: ReadJob, id: $.message.pathParam.id }
  get /peek/{id}:
    Read: { directive: ReadJob, id: $.message.pathParam.id, target: record }
    Reply: { directive: ModifyMessage, body: { record: $.memory.record } }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

const NEIGHBOUR = `key: neighbour
endpoints:
  get /jobs/{id}:
    Read: { directive: ReadJob, id: $.message.pathParam.id }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

const DAY_MS = 24 * 60 * 60 * 1000;

for (const [name, env] of storeBackends('embedded queue and store', 'BullMQ and Redis')) {
  describe(`job records on the ${name}`, () => {
    let anvil: TestInstance;
    beforeAll(async () => {
      anvil = await startInstance({
        apis: { reports: { 'api.yaml': API }, neighbour: { 'api.yaml': NEIGHBOUR } },
        env,
      });
    });
    afterAll(async () => {
      await anvil?.dispose();
      await removeRedisKeys(env);
    });

    const post = (path: string, body: unknown = {}) =>
      anvil.request(`/reports${path}`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
    const queue = async (path: string, body?: unknown): Promise<string> => {
      const reply = await post(path, body);
      expect(reply.status, reply.text).toBe(202);
      return reply.json().id ?? reply.json().job;
    };
    const record = async (id: string) => {
      const reply = await anvil.request(`/reports/jobs/${id}`);
      return { status: reply.status, body: reply.json(), type: reply.headers['content-type'] };
    };
    /** How long the store keeps the job's record still, read from the store itself. */
    const msLeft = async (id: string): Promise<number> => {
      const ns = 'localhost/dev/reports';
      if (env.REDIS_URL === undefined) {
        const db = new Database(join(anvil.dataDir, '.anvil', 'kv.sqlite'), { readonly: true });
        const row = db.prepare('SELECT expires_at FROM kv WHERE ns = ? AND key = ?').get(ns, `job:${id}`) as {
          expires_at: number;
        };
        db.close();
        return row.expires_at - Date.now();
      }
      const redis = new Redis(env.REDIS_URL);
      const left = await redis.pttl(`${env.ANVIL_REDIS_PREFIX}${Buffer.byteLength(ns)}:${ns}:job:${id}`);
      await redis.quit();
      return left;
    };

    it('the job replaces the queued record with its result; get /jobs/{id} answers it', async () => {
      const id = await queue('/reports', { n: 7 });
      const done = await eventually(async () => {
        const now = await record(id);
        return now.body.state === 'done' ? now : null;
      });
      expect(done).toEqual({
        status: 200,
        body: { state: 'done', total: 7, job: id },
        type: 'application/json; charset=utf-8',
      });
      // Kept a day from the job's last write, not 600 s.
      expect(await msLeft(id)).toBeGreaterThan(DAY_MS - 60_000);
    });

    it('a delayed job has its queued record until it runs: kept for its delay and a day more', async () => {
      const id = await queue('/later');
      expect(await record(id)).toMatchObject({ status: 200, body: { message: 'queued', id } });
      const left = await msLeft(id);
      expect(left).toBeGreaterThan(3600_000 + DAY_MS - 60_000);
      expect(left).toBeLessThanOrEqual(3600_000 + DAY_MS);
    });

    it("the job's ERROR_FLOW can record its failure", async () => {
      const id = await queue('/failing');
      const failed = await eventually(async () => {
        const now = await record(id);
        return now.body.state === 'failed' ? now.body : null;
      });
      expect(failed).toEqual({ state: 'failed', why: 'the input was wrong' });
    });

    it('keeps a string result, answered as JSON', async () => {
      const id = await queue('/text');
      expect(await eventually(async () => ((await record(id)).body === 'just a string' ? true : null))).toBe(true);
    });

    it('WriteToJob in the queuing request writes the record of the job it queued', async () => {
      const id = await queue('/in-request');
      expect(id).toMatch(/^j-/);
      expect((await record(id)).body).toEqual({ state: 'accepted' });
    });

    it('ReadJob with target gives the record or null; without, an unknown id is a 404', async () => {
      const id = await queue('/later');
      expect((await anvil.request(`/reports/peek/${id}`)).json()).toEqual({ record: { message: 'queued', id } });
      expect((await anvil.request('/reports/peek/j-nope')).json()).toEqual({ record: null });
      const missing = await record('j-nope');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({
        error: 'job "j-nope" not found (not queued by this API with identifier, or its record expired)',
      });
    });

    it("another API cannot read the API's job records", async () => {
      const id = await queue('/later');
      const reply = await anvil.request(`/neighbour/jobs/${id}`);
      expect(reply.status).toBe(404);
    });

    it('WriteToJob without a job, or with a null value, is an error of the API', async () => {
      const noJob = await post('/no-job');
      expect(noJob.status).toBe(500);
      expect(noJob.json().error).toBe(
        'WriteToJob: this flow has no job id (it runs in a job, or after ForTheWorker in the request that queued it)',
      );
      const nothing = await post('/null-value');
      expect(nothing.status).toBe(500);
      expect(nothing.json().error).toBe(
        'WriteToJob: value is null; a job record is a map, a list, a string, a number or a boolean',
      );
    });
  });
}
