import { STATUS_CODES } from 'node:http';
import { Errors } from '../shared/errors.js';
import { defineDirective, statusAndMessageParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'ThrowError',
  summary: 'Throws an error with `status` (default 500) and `message`: the flow switches to ERROR_FLOW.',
  example: { status: 404, message: 'Page not found' },
  failures: [
    { error: Errors.thrown, when: 'always, with `status` (500) and `message`: the flow switches to ERROR_FLOW' },
  ],
  params: statusAndMessageParams,
  describe: (params) => ({
    responses: {
      [typeof params.status === 'number' ? params.status : 500]:
        typeof params.message === 'string' ? params.message : 'an error this endpoint throws',
    },
  }),
  run(_ctx, params) {
    const status = params.status ?? 500;
    throw Errors.thrown(status, params.message ?? STATUS_CODES[status] ?? 'Error');
  },
});
