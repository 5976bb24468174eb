import { STATUS_CODES } from 'node:http';
import { Errors } from '../errors.js';
import { defineDirective } from './types.js';

interface Params {
  status?: number;
  message?: string;
}

export default defineDirective<Params>({
  name: 'ThrowError',
  summary: 'Throws an error with `status` (default 500) and `message`: the flow switches to ERROR_FLOW.',
  params: {
    type: 'object',
    properties: {
      status: { type: 'integer', minimum: 400, maximum: 599 },
      message: { type: 'string' },
    },
    additionalProperties: false,
  },
  run(_ctx, params) {
    const status = params.status ?? 500;
    throw Errors.thrown(status, params.message ?? STATUS_CODES[status] ?? 'Error');
  },
});
