import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

// Issue 26: job outcomes and outgoing call latency, in /anvil/metrics and in the operator JSON.

const WORKER = (port: number) => `key: worker
endpoints:
  post /fail:
    Queue: { directive: ForTheWorker, identifier: true }
    Fail: { directive: ThrowError, status: 500, message: this job always fails }
  post /succeed:
    Queue: { directive: ForTheWorker, identifier: true }
    Ping: { directive: Ping }
  get /echo:
    Forward: { directive: Http, host: "http://127.0.0.1:${port}", timeout: 3 }
`;

let upstream: Upstream;
let anvil: TestInstance;
beforeAll(async () => {
  upstream = await startUpstream();
  anvil = await startInstance({
    apis: { worker: { 'api.yaml': WORKER(upstream.port) } },
    args: ['--job-backoff', '20ms'],
    env: { ANVIL_EGRESS_ALLOW: '127.0.0.1' },
  });
});
afterAll(async () => {
  await anvil?.dispose();
  await upstream?.close();
});

const worker = { host: 'localhost', api: 'worker' };

describe('job outcomes and outgoing calls', () => {
  it('counts job runs by outcome, and shows the failed jobs in the overview', async () => {
    expect((await anvil.request('/worker/succeed', { method: 'POST' })).status).toBe(202);
    expect((await anvil.request('/worker/fail', { method: 'POST' })).status).toBe(202);
    // One run and three retries (SPEC §8), the last failing for good.
    const text = await eventually(async () => {
      const t = await scrapeMetrics(anvil);
      return sample(t, 'anvil_job_runs_total', { ...worker, outcome: 'failed' }) === 1 ? t : null;
    }, 20_000);
    expect(sample(text, 'anvil_job_runs_total', { ...worker, outcome: 'retried' })).toBe(3);
    expect(sample(text, 'anvil_job_runs_total', { ...worker, outcome: 'completed' })).toBe(1);

    const api = await eventually(async () => {
      const found = (await anvil.admin('/anvil/overview')).json().apis.find((a: { key: string }) => a.key === 'worker');
      return found.jobs.failed === 1 ? found : null;
    });
    expect(api.jobs).toEqual({ waiting: 0, failed: 1 });
    expect(api.last1m.jobsFailed).toBe(1);
    expect(api.last5m.jobsFailed).toBe(1);
    // Job runs are not requests: only the two POSTs are counted.
    expect(api.last1m.requests).toBe(2);
  });

  it('histograms the latency of outgoing requests by API, as its threads report it', async () => {
    for (let i = 0; i < 3; i++) expect((await anvil.request('/worker/echo')).status).toBe(200);
    expect(upstream.hits('/echo')).toBe(3);
    const text = await eventually(async () => {
      const t = await scrapeMetrics(anvil);
      return (sample(t, 'anvil_outgoing_request_duration_seconds_count', worker) ?? 0) >= 3 ? t : null;
    });
    expect(sample(text, 'anvil_outgoing_request_duration_seconds_count', worker)).toBe(3);
    expect(sample(text, 'anvil_outgoing_request_duration_seconds_bucket', { ...worker, le: '+Inf' })).toBe(3);
    const seconds = sample(text, 'anvil_outgoing_request_duration_seconds_sum', worker)!;
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThan(9);
  });
});
