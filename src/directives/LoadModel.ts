import { BODY_NOT_JSON_FAILURE, modelValue } from './models/model-directive.js';
import { WHOLE_BODY, defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'LoadModel',
  summary:
    'Stores `source` in memory `target`, for ValidateModel. With `$.message.body` (the usual source) a JSON object or array body is stored parsed, and a body that is not valid JSON is a 400 saying so.',
  example: { source: '$.message.body', target: 'order' },
  memory: { writes: ['<target>'] },
  failures: [BODY_NOT_JSON_FAILURE],
  params: {
    type: 'object',
    properties: { source: {}, target: { type: 'string', minLength: 1 } },
    required: ['source', 'target'],
    additionalProperties: false,
  },
  describe: (params) =>
    WHOLE_BODY.has(params.source as string) && typeof params.target === 'string' ? { bodyModel: params.target } : {},
  run(ctx, { source, target }) {
    ctx.memory.set(target, modelValue(ctx, source));
  },
});
