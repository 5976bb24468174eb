import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'ResultResponse',
  summary: 'Answers 200 {"result": <result>}.',
  example: { result: '$.memory.total' },
  params: { type: 'object', properties: { result: {} }, required: ['result'], additionalProperties: false },
  run(ctx, { result }) {
    ctx.message.respondJson(200, { result });
  },
});
