import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiDatabaseContract, contractApis } from '../database/api-database-contract.js';
import { anvilCli } from '../helpers/cli.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';

// Two former files with the default options of default-options.test.ts and nothing of an instance
// but their own APIs, on an instance of their own beside it: the original's job fixture and the
// database contract's API are under keys (jobs, notes) that its spec examples hold. Each former
// file's describes after a comment naming it.

// original-jobs
// Issue 28: jobs of APIs in the original's style, queued and run by the router — ForTheWorker's 200
// under `compat: hefesto` (item 6) and test/fixtures/original's job. What the original's APIs do
// otherwise runs in-process: test/directives/original-compat.test.ts and original-fixture.test.ts.

const fixture = join(import.meta.dirname, '../fixtures/original');

const queueing = (key: string, compat: string) => ({
  'api.yaml': `key: ${key}\n${compat}endpoints:\n  post /queue:\n    Queue: { directive: ForTheWorker, identifier: true }\n    Work: { directive: SetMemory, target: done, value: true }\n`,
});

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      // original-jobs
      legacy: queueing('legacy', ''),
      ported: queueing('ported', 'compat: hefesto\n'),
      jobs: fixture,
      // sqlite-api-database
      ...contractApis('sqlite'),
    },
  });
});
afterAll(async () => anvil?.dispose());

// —— original-jobs ——

describe('ForTheWorker with identifier (issue 28 item 6)', () => {
  it("answers 202 in Anvil, and the original's 200 with compat: hefesto, with the same body", async () => {
    const anvilReply = await anvil.request('/legacy/queue', { method: 'POST' });
    expect(anvilReply.status).toBe(202);
    expect(anvilReply.json()).toEqual({ message: 'queued', id: expect.any(String) });

    const ported = await anvil.request('/ported/queue', { method: 'POST' });
    expect(ported.status).toBe(200);
    expect(ported.headers['content-type']).toContain('application/json');
    const { id } = ported.json();
    expect(ported.json()).toEqual({ message: 'queued', id });
    // The job was queued all the same, and runs.
    await eventually(
      () => JSON.parse(anvilCli(['jobs', 'get', id, '--data', anvil.dataDir, '--json']).stdout).state === 'completed',
    );
  });
});

describe("an API in the original's style", () => {
  it("queues a job with the original's 200, its request normalised by two custom directives, read back with a cookie added", async () => {
    const body = JSON.stringify({ kind: ' Daily ', dates: ['2024-01-01'] });
    const queued = await anvil.request('/jobs/jobs', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(queued.status).toBe(200);
    const { id } = queued.json();
    expect(queued.json()).toEqual({ message: 'queued', id });

    const done = await eventually(async () => {
      const reply = await anvil.request(`/jobs/jobs/${id}`);
      return reply.status === 200 ? reply : null;
    });
    expect(done.json()).toEqual({ id, request: { kind: 'daily', dates: ['2024-01-01'], api: 'jobs', env: 'dev' } });
    expect(done.headers['cache-control']).toBe('no-cache');
    expect(done.headers['set-cookie']).toBe(`lastJob=${id}; Path=/`);
    // The job's record: {message: queued, id} until the job wrote its result with WriteToJob.
    await eventually(async () => (await anvil.request(`/jobs/jobs/${id}/result`)).json().message === 'done');
    expect((await anvil.request(`/jobs/jobs/${id}/result`)).json()).toEqual({ message: 'done', kind: 'daily' });
  });
});

// —— sqlite-api-database ——

// The contract of an API's database on its own SQLite file (the default mode), on this file's
// instance (which serves contractApis('sqlite')): its cleanup is this file's afterAll.
apiDatabaseContract('sqlite', async () => ({ instance: anvil, cleanup: async () => {} }));
