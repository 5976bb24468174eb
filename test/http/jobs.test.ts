import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { storeBackends } from '../helpers/store-backends.js';

// SPEC §4 QUEUE_FLOW, §8 Jobs, over HTTP, on the embedded queue and on BullMQ (Redis).
const API = {
  'api.yaml': `key: jobs
before:
  Connect: { directive: DatabaseConnect }
endpoints:
  post /work:
    Captured: { directive: SetMemory, target: captured, value: $.message.body.value }
    Queue: { directive: ForTheWorker, identifier: true }
    Store: { directive: DatabaseQuery, sql: "INSERT INTO done (id, value) VALUES (?, ?)", params: [$.id, $.memory.captured], mode: run }
  post /later:
    Queue: { directive: ForTheWorker, identifier: true, delay: 1 }
    Store: { directive: DatabaseQuery, sql: "INSERT INTO done (id, value) VALUES (?, 'later')", params: [$.id], mode: run }
  post /reply-myself:
    Queue: { directive: ForTheWorker }
    Store: { directive: DatabaseQuery, sql: "INSERT INTO done (id, value) VALUES (?, 'quiet')", params: [$.id], mode: run }
    Reply: { directive: ModifyMessage, status: 202, body: { accepted: true }, groups: [QUEUE_FLOW] }
  post /flaky:
    Queue: { directive: ForTheWorker, identifier: true }
    Try: { directive: OnlyWhenOn }
    Store: { directive: DatabaseQuery, sql: "INSERT INTO done (id, value) VALUES (?, 'flaky')", params: [$.id], mode: run }
  post /slow:
    Queue: { directive: ForTheWorker, identifier: true }
    Started: { directive: DatabaseQuery, sql: "INSERT INTO runs (id) VALUES (?)", params: [$.id], mode: run }
    Slowness: { directive: DatabaseQuery, sql: "SELECT CASE WHEN count(*) > 1 THEN 0 ELSE 60000 END AS ms FROM runs WHERE id = ?", params: [$.id], target: slowness, mode: get }
    Wait: { directive: Delay, ms: $.memory.slowness.ms }
    Store: { directive: DatabaseQuery, sql: "INSERT OR REPLACE INTO done (id, value) VALUES (?, 'slow')", params: [$.id], mode: run }
  post /switch:
    On: { directive: DatabaseQuery, sql: "UPDATE switch SET on_ = 1", mode: run }
  get /runs/{id}:
    Count: { directive: DatabaseQuery, sql: "SELECT count(*) AS runs FROM runs WHERE id = ?", params: [$.message.pathParam.id], target: count, mode: get }
    Reply: { directive: ModifyMessage, body: $.memory.count }
  get /ran-at/{id}:
    Read: { directive: DatabaseQuery, sql: "SELECT ran_at FROM done WHERE id = ?", params: [$.message.pathParam.id], target: row, mode: get }
    Reply: { directive: ModifyMessage, body: $.memory.row }
  get /done/{id}:
    Read: { directive: DatabaseQuery, sql: "SELECT id, value FROM done WHERE id = ?", params: [$.message.pathParam.id], target: row, mode: get }
    Reply: { directive: ModifyMessage, body: $.memory.row }
`,
  'Assets/db/001.sql':
    "CREATE TABLE done (id TEXT PRIMARY KEY, value TEXT, ran_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)));\nCREATE TABLE switch (on_ INTEGER NOT NULL);\nINSERT INTO switch VALUES (0);\nCREATE TABLE runs (id TEXT NOT NULL);\n",
  'Directives/OnlyWhenOn.js': `export default function (state) {
  if (!state.db.get('SELECT on_ FROM switch').on_) state.fail(500, 'the switch is off');
}
`,
};

for (const [name, env] of storeBackends('embedded queue', 'BullMQ on Redis')) {
  describe(`jobs on the ${name}`, () => {
    let anvil: TestInstance;
    const dataDir = mkdtempSync(join(tmpdir(), 'anvil-jobs-'));
    // A lease of 3 s, not the default 10 s: the run cut by SIGKILL below runs again sooner.
    const args = ['--job-backoff', '50ms', '--job-lease', '3s'];
    const jobsCli = (...more: string[]) => anvilCli(['jobs', ...more, '--data', dataDir, '--json'], { env });

    beforeAll(async () => {
      anvil = await startInstance({ apis: { jobs: API }, dataDir, env, args });
    });
    afterAll(async () => {
      jobsCli('flush');
      await anvil?.dispose();
    });

    const post = (path: string, body?: unknown) =>
      anvil.request(`/jobs${path}`, {
        method: 'POST',
        body: JSON.stringify(body ?? {}),
        headers: { 'content-type': 'application/json' },
      });
    const done = async (id: string) => {
      const reply = await anvil.request(`/jobs/done/${id}`);
      return reply.text === '' ? null : reply.json();
    };

    it('answers 202 with the job id, then runs the rest with the memory of that moment and $.id = job id', async () => {
      const reply = await post('/work', { value: 'captured in the request' });
      expect(reply.status).toBe(202);
      const { message, id } = reply.json();
      expect(message).toBe('queued');
      expect(id).toMatch(/^j-/);
      expect(await eventually(() => done(id))).toEqual({ id, value: 'captured in the request' });
    });

    it('runs only QUEUE_FLOW entries in the request after queueing', async () => {
      const reply = await post('/reply-myself');
      expect(reply.status).toBe(202);
      expect(reply.json()).toEqual({ accepted: true });
    });

    it('honours the delay', async () => {
      const started = Date.now();
      const { id } = (await post('/later')).json();
      expect(await done(id)).toBeNull();
      await eventually(() => done(id), 10_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      // Not run early: the row it wrote carries when it ran (SQLite's clock, the same as ours).
      const { ran_at } = (await anvil.request(`/jobs/ran-at/${id}`)).json();
      expect(ran_at - started).toBeGreaterThanOrEqual(1000);
    });

    it('retries a failing job 3 times, then keeps it failed with its error; requeue-failed runs it again', async () => {
      const { id } = (await post('/flaky')).json();
      const failed = await eventually(() => {
        const job = JSON.parse(jobsCli('get', id).stdout);
        return job.state === 'failed' ? job : null;
      }, 15_000);
      expect(failed.attempts).toBe(4);
      expect(failed.error).toContain('the switch is off');
      expect(await done(id)).toBeNull();
      expect(JSON.parse(jobsCli('count', '--api', 'jobs').stdout).failed).toBe(1);

      expect((await post('/switch')).status).toBe(200);
      expect(JSON.parse(jobsCli('requeue-failed', '--api', 'jobs').stdout)).toEqual({ requeued: 1 });
      expect(await eventually(() => done(id), 10_000)).toEqual({ id, value: 'flaky' });
      expect(JSON.parse(jobsCli('get', id).stdout).state).toBe('completed');
    });

    it('loses no accepted job when the instance is killed with SIGKILL and restarted', async () => {
      const { id } = (await post('/later')).json();
      anvil.child.kill('SIGKILL');
      await anvil.waitForExit();
      anvil = await startInstance({ apis: { jobs: API }, dataDir, env, args });
      expect(await eventually(() => done(id), 15_000)).toEqual({ id, value: 'later' });
    });

    it('runs again a job whose run was cut by SIGKILL (at least once)', async () => {
      // The first run waits 60 s: it is still running when the instance is killed, however slow
      // the machine. A later run of the job (it counts its runs) waits 0.
      const { id } = (await post('/slow')).json();
      const runs = async () => (await anvil.request(`/jobs/runs/${id}`)).json().runs;
      // Killed once the run has begun (it recorded itself), not merely once the queue says active.
      await eventually(async () => (await runs()) === 1 && JSON.parse(jobsCli('get', id).stdout).state === 'active');
      anvil.child.kill('SIGKILL');
      await anvil.waitForExit();
      anvil = await startInstance({ apis: { jobs: API }, dataDir, env, args });
      // The dead run's lease (3 s) runs out, then the job runs again: a second attempt.
      const job = await eventually(() => {
        const info = JSON.parse(jobsCli('get', id).stdout);
        return info.state === 'completed' ? info : null;
      }, 30_000);
      expect(await runs()).toBe(2);
      expect(job.attempts).toBe(2);
      expect(await done(id)).toEqual({ id, value: 'slow' });
    }, 60_000);

    it('shows the queue per API in /anvil/metrics', async () => {
      const text = (await anvil.request('/anvil/metrics', { host: 'admin.localhost' })).text;
      expect(text).toMatch(/anvil_job_queue_depth\{host="localhost",api="jobs",state="completed"\} \d+/);
    });
  });
}
