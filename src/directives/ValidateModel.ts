import { Errors } from '../shared/errors.js';
import { checkModelName, validateModel } from './models/model-directive.js';
import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'ValidateModel',
  summary:
    'Validates memory `name` against the JSON Schema Maps/<name>.json: 400 with the reason, or 502 with `server-side-error: true`.',
  example: { name: 'order' },
  memory: { reads: ['<name>'] },
  failures: [
    { error: Errors.modelInvalid, when: 'when memory `name` does not match Maps/<name>.json' },
    { error: Errors.modelServerSide, when: 'instead, with `server-side-error: true`' },
  ],
  params: {
    type: 'object',
    properties: { name: { type: 'string', minLength: 1 }, 'server-side-error': { type: 'boolean' } },
    required: ['name'],
    additionalProperties: false,
  },
  checkRelease: (params, release) => checkModelName('name', params.name, release),
  describe: (params) =>
    params['server-side-error'] === true || typeof params.name !== 'string'
      ? {}
      : { validatesModel: params.name, responses: { 400: 'the request body does not match its schema' } },
  run(ctx, params) {
    validateModel(ctx, 'ValidateModel', params.name, params['server-side-error'] ?? false);
  },
});
