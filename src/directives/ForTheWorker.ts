import { QUEUE_FLOW } from '../engine/groups.js';
import { AnvilError, Errors, QuotaError } from '../shared/errors.js';
import { recordQueued } from './stores/job-records.js';

import { defineDirective } from '../engine/directive-types.js';

/**
 * SPEC §4, §8: the entries after this one become a job, with the request's memory and message as
 * they are now; the job is stored durably before the request goes on. In the request, QUEUE_FLOW is
 * enabled (and every other group disabled), so only QUEUE_FLOW entries still run. With
 * `identifier`, the answer is 202 {"message":"queued","id":<job id>}, which is also the job's first
 * record (ReadJob, WriteToJob); with api.yaml `compat: hefesto`, the message's status as it is, 200
 * unless a directive changed it, as the original did.
 */
export default defineDirective({
  name: 'ForTheWorker',
  summary:
    "Queues the rest of the endpoint as a job (after `delay` seconds); with `identifier` answers 202 with the job id and writes the job's record.",
  example: { identifier: true },
  memory: { writes: ['jobId'] },
  failures: [
    { error: Errors.quotaJobPayload, when: "when the job is larger than the API's job payload quota" },
    { error: Errors.quotaQueuedJobs, when: 'when the API already has its quota of jobs queued' },
  ],
  params: {
    type: 'object',
    properties: {
      delay: { type: 'number', minimum: 0, maximum: 31_536_000, default: 0 },
      identifier: { type: 'boolean' },
    },
    additionalProperties: false,
  },
  async run(ctx, params) {
    let id: string;
    const delayMs = Math.round((params.delay ?? 0) * 1000);
    try {
      id = await ctx.api.enqueue(JSON.stringify(ctx.continuation()), delayMs);
    } catch (error) {
      // A quota's message is for the client as it is (413 too large, 503 queue full: retry-after).
      if (error instanceof QuotaError) {
        if (error.retryAfterSeconds !== undefined)
          ctx.message.setHeader('retry-after', String(error.retryAfterSeconds));
        throw error;
      }
      const status = error instanceof AnvilError ? error.status : 503;
      throw Errors.enqueueFailed(status, (error as Error).message);
    }
    ctx.groups.enable(QUEUE_FLOW);
    ctx.memory.set('jobId', id);
    if (params.identifier) {
      // The original answered with the status the message had (200); `compat: hefesto` keeps that.
      ctx.message.respondJson(ctx.api.compat === 'hefesto' ? ctx.message.status : 202, { message: 'queued', id });
      // The job is stored: failing the request now would have its client queue it again.
      await recordQueued(ctx.api.kv, id, delayMs).catch((error: unknown) => {
        ctx.api.log('warn', 'the queued job has no record (ReadJob finds none until the job writes one)', {
          jobId: id,
          error: (error as Error).message,
        });
      });
    }
  },
});
