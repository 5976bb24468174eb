import { Errors } from '../shared/errors.js';
import { readJobRecord } from './stores/job-records.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Reads the record of one of the API's jobs (what ForTheWorker `identifier` and WriteToJob wrote).
 * The original had no directive for it (its users read Redis); the name pairs with WriteToJob. With
 * `target` the record (or null) goes to memory; without it, it is the answer: 200 with the record,
 * or 404 — so `get /jobs/{id}: { Read: { directive: ReadJob, id: $.message.pathParam.id } }` is a
 * whole job-status endpoint.
 */
export default defineDirective({
  name: 'ReadJob',
  summary:
    "Reads the record of the API's job `id` into memory `target` (null when none), or without target answers it (200 JSON, or 404).",
  example: { id: '$.message.pathParam.id', target: 'job' },
  memory: { writes: ['<target>'] },
  failures: [{ error: Errors.jobRecordNotFound, when: 'without `target`, when the job has no record' }],
  params: {
    type: 'object',
    properties: {
      id: { type: 'string', minLength: 1 },
      target: { type: ['string', 'null'], minLength: 1 },
    },
    required: ['id'],
    additionalProperties: false,
  },
  async run(ctx, { id, target }) {
    const record = await readJobRecord(ctx.api.kv, id);
    if (typeof target === 'string') {
      ctx.memory.set(target, record);
      return;
    }
    if (record === null) throw Errors.jobRecordNotFound(JSON.stringify(id));
    // A string record is sent as JSON too (respondJson sends strings as they are).
    ctx.message.respondJson(200, typeof record === 'string' ? JSON.stringify(record) : record);
  },
});
