import { Errors } from '../shared/errors.js';
import { defineDirective, statusAndMessageParams } from '../engine/directive-types.js';

/** What of the failed answer's body goes to the instance log. */
const BODY_EXCERPT = 200;

export default defineDirective({
  name: 'CheckStatus',
  summary:
    'After Http (or anything that sets the status): fails with `status` (502) and `message` ("Server Side Error") when the message status is 400 or more.',
  example: { status: 502, message: 'Server Side Error' },
  failures: [{ error: Errors.statusCheckFailed, when: 'with `status` (502) when the message status is 400 or more' }],
  params: statusAndMessageParams,
  describe: (params) => ({
    responses: { [typeof params.status === 'number' ? params.status : 502]: 'the upstream answered an error' },
  }),
  run(ctx, params) {
    const found = ctx.message.status;
    if (found < 400) return;
    const body = ctx.message.body;
    const excerpt =
      body === null ? '' : (typeof body === 'string' ? body : body.toString('utf8')).slice(0, BODY_EXCERPT);
    ctx.api.log('warn', `CheckStatus: the message has status ${found}`, { status: found, body: excerpt });
    throw Errors.statusCheckFailed(params.status ?? 502, params.message ?? 'Server Side Error');
  },
});
