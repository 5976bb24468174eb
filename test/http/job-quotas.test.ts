import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { quotaRefusals } from '../helpers/metrics.js';
import { storeBackends } from '../helpers/store-backends.js';

// Issue 21, quotas on shared things: job payload size and queued jobs per API, over HTTP, on the
// embedded queue and on BullMQ. The instance's ceilings are lowered with --max-job-payload and
// --max-queued-jobs; one API asks for less in api.yaml, one asks for more than the instance allows.
const queuing = (key: string, limits: string) => `key: ${key}
${limits}
endpoints:
  post /work:
    Captured: { directive: SetMemory, target: captured, value: $.message.body.value }
    Queue: { directive: ForTheWorker, identifier: true, delay: 600 }
    Done: { directive: Ping }
`;
const APIS = {
  // asks for less than the instance allows: 1 KiB payloads, 2 queued jobs
  modest: {
    'api.yaml': `${queuing('modest', 'limits: { jobPayloadKb: 1, queuedJobs: 2 }')}after:\n  OnError: { directive: OnError, groups: [ERROR_FLOW] }\n`,
  },
  // asks for more than the instance allows: it gets the instance's 3 (and 2 KiB, the default)
  greedy: { 'api.yaml': queuing('greedy', 'limits: { queuedJobs: 50 }') },
  neighbour: { 'api.yaml': queuing('neighbour', '') },
};

for (const [name, env] of storeBackends('embedded queue', 'BullMQ on Redis')) {
  describe(`job quotas on the ${name}`, () => {
    let anvil: TestInstance;
    const dataDir = mkdtempSync(join(tmpdir(), 'anvil-job-quotas-'));

    beforeAll(async () => {
      anvil = await startInstance({
        apis: APIS,
        dataDir,
        env,
        args: ['--max-job-payload', '2KiB', '--max-queued-jobs', '3'],
      });
    });
    afterAll(async () => {
      anvilCli(['jobs', 'flush', '--data', dataDir, '--json'], { env });
      await anvil?.dispose();
    });

    const work = (api: string, value: string) =>
      anvil.request(`/${api}/work`, {
        method: 'POST',
        body: JSON.stringify({ value }),
        headers: { 'content-type': 'application/json' },
      });

    it("a payload over the API's quota is refused with 413 naming the limit; the request's own limit is the api.yaml one", async () => {
      const reply = await work('modest', 'x'.repeat(1500));
      expect(reply.status).toBe(413);
      expect(reply.json().error).toMatch(
        /^the job is \d+ bytes, over this API's job payload quota of 1024 bytes \(api\.yaml limits\.jobPayloadKb, at most --max-job-payload\)$/,
      );
      expect(await quotaRefusals(anvil, 'modest', 'job_payload')).toBe(1);
    });

    it("an API without a payload limit of its own gets the instance's (2 KiB); a message without OnError says the same", async () => {
      expect((await work('greedy', 'x'.repeat(500))).status).toBe(202);
      const reply = await work('greedy', 'x'.repeat(2500));
      expect(reply.status).toBe(413);
      expect(reply.json().error).toMatch(/over this API's job payload quota of 2048 bytes/);
    });

    it('at its queued jobs quota an API gets 503 with retry-after and a message; its neighbour still queues', async () => {
      for (let i = 0; i < 2; i++) expect((await work('modest', `job ${i}`)).status).toBe(202);
      const full = await work('modest', 'one too many');
      expect(full.status).toBe(503);
      expect(full.headers['retry-after']).toBe('5');
      expect(full.json().error).toBe(
        'this API already has 2 jobs queued and not finished, its quota (api.yaml limits.queuedJobs, at most --max-queued-jobs); retry later',
      );
      expect((await work('neighbour', 'mine')).status).toBe(202);
      expect(await quotaRefusals(anvil, 'modest', 'queued_jobs')).toBe(1);
      expect(await quotaRefusals(anvil, 'neighbour', 'queued_jobs')).toBe(0);
    });

    it("an API asking for more queued jobs than the instance allows gets the instance's ceiling", async () => {
      // greedy already has one job queued (the test above)
      for (let i = 0; i < 2; i++) expect((await work('greedy', `job ${i}`)).status).toBe(202);
      const full = await work('greedy', 'one too many');
      expect(full.status).toBe(503);
      expect(full.json().error).toMatch(/already has 3 jobs queued and not finished/);
    });

    it("flushing the API's jobs makes room again", async () => {
      const flushed = anvilCli(['jobs', 'flush', '--api', 'modest', '--data', dataDir, '--json'], { env });
      expect(flushed.status).toBe(0);
      expect((await work('modest', 'again')).status).toBe(202);
    });
  });
}
