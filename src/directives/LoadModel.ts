import { WHOLE_BODY, defineDirective } from './types.js';

interface Params {
  source: unknown;
  target: string;
}

export default defineDirective<Params>({
  name: 'LoadModel',
  summary: 'Stores `source` (usually `$.message.body`) in memory `target`, for ValidateModel.',
  example: { source: '$.message.body', target: 'order' },
  memory: { writes: ['<target>'] },
  params: {
    type: 'object',
    properties: { source: {}, target: { type: 'string', minLength: 1 } },
    required: ['source', 'target'],
    additionalProperties: false,
  },
  describe: (params) => (WHOLE_BODY.has(params.source as string) && typeof params.target === 'string' ? { bodyModel: params.target } : {}),
  run(ctx, { source, target }) {
    ctx.memory.set(target, source);
  },
});
