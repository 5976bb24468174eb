import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'IdResponse',
  summary: 'Answers 201 {"id": <id>} (a created resource).',
  example: { id: '$.memory.created.lastInsertRowid' },
  params: { type: 'object', properties: { id: {} }, required: ['id'], additionalProperties: false },
  run(ctx, { id }) {
    ctx.message.respondJson(201, { id });
  },
});
