import { Errors } from '../errors.js';
import { checkModelName, validateModel } from '../models/model-directive.js';
import { defineDirective } from './types.js';

interface Params {
  source: unknown;
  target: string;
  'server-side-error'?: boolean;
}

export default defineDirective<Params>({
  name: 'LoadAndValidateModel',
  summary: 'LoadModel, then ValidateModel with the name `target` (the map Maps/<target>.json).',
  example: { source: '$.message.body', target: 'order' },
  memory: { writes: ['<target>'] },
  failures: [
    { error: Errors.modelInvalid, when: 'when the value does not match Maps/<target>.json' },
    { error: Errors.modelServerSide, when: 'instead, with `server-side-error: true`' },
  ],
  params: {
    type: 'object',
    properties: { source: {}, target: { type: 'string', minLength: 1 }, 'server-side-error': { type: 'boolean' } },
    required: ['source', 'target'],
    additionalProperties: false,
  },
  checkRelease: (params, release) => checkModelName('target', params.target, release),
  run(ctx, params) {
    ctx.memory.set(params.target, params.source);
    validateModel(ctx, 'LoadAndValidateModel', params.target, params['server-side-error'] ?? false);
  },
});
