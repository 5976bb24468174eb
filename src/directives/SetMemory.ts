import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'SetMemory',
  summary: 'Stores a value (aliases resolved) in memory `target` (dots make nested keys).',
  example: { target: 'user.id', value: '$.message.pathParam.id' },
  memory: { writes: ['<target>'] },
  params: {
    type: 'object',
    properties: { target: { type: 'string', minLength: 1 }, value: {} },
    required: ['target', 'value'],
    additionalProperties: false,
  },
  run(ctx, { target, value }) {
    ctx.memory.set(target, value);
  },
});
