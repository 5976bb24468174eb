import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAILING_JOBS_API } from '../helpers/failing-jobs-api.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';

// Issue 26: an API's jobs on the admin host for the console — counts, requeue the failed ones,
// flush — with the management API's credentials, audited like the other management actions.

let anvil: TestInstance;
beforeAll(async () => {
  anvil = await startInstance({ apis: { worker: { 'api.yaml': FAILING_JOBS_API } }, args: ['--job-backoff', '20ms'] });
});
afterAll(async () => anvil?.dispose());

const counts = async () => (await anvil.admin('/anvil/api/worker/jobs')).json().counts;
/** Until the API's jobs have all failed for good (one run and three retries each). */
const allFailed = (n: number) =>
  eventually(async () => {
    const c = await counts();
    return c.failed === n && c.waiting + c.delayed + c.active === 0;
  }, 20_000);

describe('GET /anvil/api/<key>/jobs and its actions', () => {
  it('counts the jobs per state', async () => {
    expect(await counts()).toEqual({ waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0 });
    expect((await anvil.request('/worker/fail', { method: 'POST' })).status).toBe(202);
    await allFailed(1);
    const answer = await anvil.admin('/anvil/api/worker/jobs');
    expect(answer.json()).toEqual({
      key: 'worker',
      counts: { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 1 },
    });
    expect(answer.headers['cache-control']).toBe('no-store');
  });

  it('requeues the failed jobs (they run again), audited with the count', async () => {
    const requeued = await anvil.admin('/anvil/api/worker/jobs/requeue-failed', { method: 'POST' });
    expect(requeued.status).toBe(200);
    expect(requeued.json()).toEqual({ key: 'worker', requeued: 1 });
    await allFailed(1);
    const [entry] = (await anvil.admin('/anvil/audit?action=jobs-requeue-failed')).json().entries;
    expect(entry).toMatchObject({
      action: 'jobs-requeue-failed',
      host: 'localhost',
      api: 'worker',
      result: 'ok',
      status: 200,
      origin: 'http',
      address: '127.0.0.1',
      detail: { requeued: 1 },
    });
    expect(entry.keyFingerprint).toMatch(/^[0-9a-f]{12}$/);
  });

  it('flushes the jobs, audited with the count', async () => {
    const flushed = await anvil.admin('/anvil/api/worker/jobs/flush', { method: 'POST' });
    expect(flushed.json()).toEqual({ key: 'worker', removed: 1 });
    expect(await counts()).toEqual({ waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0 });
    const [entry] = (await anvil.admin('/anvil/audit?action=jobs-flush')).json().entries;
    expect(entry).toMatchObject({ action: 'jobs-flush', api: 'worker', result: 'ok', detail: { removed: 1 } });
  });

  it('refuses an unknown API (audited), an unknown action, a wrong method and a caller without credentials', async () => {
    const unknown = await anvil.admin('/anvil/api/nope/jobs/flush', { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toEqual({ error: 'unknown API "nope"', code: 'ANVIL_ERR_UNKNOWN_API' });
    const [entry] = (await anvil.admin('/anvil/audit?api=nope')).json().entries;
    expect(entry).toMatchObject({ action: 'jobs-flush', result: 'error', status: 404, error: 'unknown API "nope"' });

    expect((await anvil.admin('/anvil/api/nope/jobs')).status).toBe(404);
    const action = await anvil.admin('/anvil/api/worker/jobs/explode', { method: 'POST' });
    expect(action.status).toBe(404);
    expect(action.json().error).toBe('unknown job action "explode" (flush, requeue-failed)');
    const get = await anvil.admin('/anvil/api/worker/jobs/flush');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect((await anvil.admin('/anvil/api/worker/jobs', { method: 'DELETE' })).status).toBe(405);
    expect(
      (await anvil.request('/anvil/api/worker/jobs/flush', { method: 'POST', host: 'admin.localhost' })).status,
    ).toBe(401);
    expect(
      (await anvil.admin('/anvil/api/worker/jobs/flush', { method: 'POST', headers: { 'public-host-key': 'wrong' } }))
        .status,
    ).toBe(401);
  });
});
