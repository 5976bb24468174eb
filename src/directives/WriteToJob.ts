import { Errors } from '../shared/errors.js';
import { writeJobRecord } from './stores/job-records.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Replaces the record of this flow's job with `value` (ORIGINAL: a map or a list only; here any
 * JSON value but null). The job is the one running (`$.id` in a job), or the one ForTheWorker
 * queued earlier in this request (memory `jobId`).
 */
export default defineDirective({
  name: 'WriteToJob',
  summary:
    "Replaces the record of this flow's job (the job running, or the one ForTheWorker queued in this request) with `value`; ReadJob reads it, for 24 h.",
  example: { value: { status: 'done' } },
  memory: { reads: ['jobId'] },
  failures: [
    { error: Errors.jobRecordNoJob, when: 'when the flow has no job' },
    { error: Errors.jobRecordNull, when: 'when `value` is null' },
  ],
  params: {
    type: 'object',
    properties: { value: {} },
    required: ['value'],
    additionalProperties: false,
  },
  async run(ctx, { value }) {
    const queued = ctx.memory.get('jobId');
    const jobId = ctx.request.job ? ctx.id : typeof queued === 'string' ? queued : null;
    if (jobId === null) throw Errors.jobRecordNoJob();
    if (value === null || value === undefined) throw Errors.jobRecordNull();
    await writeJobRecord(ctx.api.kv, jobId, value);
  },
});
