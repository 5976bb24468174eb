import { Errors } from '../shared/errors.js';
import { BODY_NOT_JSON_FAILURE, checkModelName, modelValue, validateModel } from './models/model-directive.js';
import { WHOLE_BODY, defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'LoadAndValidateModel',
  summary: 'LoadModel, then ValidateModel with the name `target` (the map Maps/<target>.json).',
  example: { source: '$.message.body', target: 'order' },
  memory: { writes: ['<target>'] },
  failures: [
    { error: Errors.modelInvalid, when: 'when the value does not match Maps/<target>.json' },
    { error: Errors.modelServerSide, when: 'instead, with `server-side-error: true`' },
    BODY_NOT_JSON_FAILURE,
  ],
  params: {
    type: 'object',
    properties: { source: {}, target: { type: 'string', minLength: 1 }, 'server-side-error': { type: 'boolean' } },
    required: ['source', 'target'],
    additionalProperties: false,
  },
  checkRelease: (params, release) => checkModelName('target', params.target, release),
  describe: (params) =>
    typeof params.target !== 'string' || params['server-side-error'] === true
      ? {}
      : {
          validatesModel: params.target,
          responses: { 400: 'the request body does not match its schema' },
          ...(WHOLE_BODY.has(params.source as string) ? { bodyModel: params.target } : {}),
        },
  run(ctx, params) {
    ctx.memory.set(params.target, modelValue(ctx, params.source));
    validateModel(ctx, 'LoadAndValidateModel', params.target, params['server-side-error'] ?? false);
  },
});
