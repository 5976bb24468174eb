import { endToEnd, headerTable } from '../shared/http/hop-by-hop.js';
import { send } from './outgoing/send.js';
import { LOCAL_CALL_TIMEOUT_MS } from './LocalCall.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * The original's Event: not an event bus, a synchronous POST of the current body (with its
 * content-type) to another API of the same public host (`target` is `/<api>/<rest>`) over the
 * in-process bus. The callee's status and body replace the message's; its headers (hop-by-hop ones
 * dropped) are merged over the message's. An answer >= 400 is not an error (the original does not
 * verify); a cycle still ends in 508.
 */
export default defineDirective({
  name: 'Event',
  summary:
    "POSTs the current body to another API of this host (`target` /<api>/…) over the bus; its status and body replace the message's, its headers merge in.",
  example: { target: '/audit/events' },
  params: {
    type: 'object',
    properties: {
      target: { type: 'string', pattern: '^/[a-z0-9]' },
    },
    required: ['target'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const message = ctx.message;
    const headers: Record<string, string> = {};
    const type = message.header('content-type');
    if (typeof type === 'string') headers['content-type'] = type;
    const response = await send(ctx, {
      host: ctx.api.localBaseUrl,
      path: params.target,
      verb: 'POST',
      query: '',
      headers,
      body: message.body,
      timeoutMs: LOCAL_CALL_TIMEOUT_MS,
    });
    for (const [name, value] of Object.entries(endToEnd(headerTable(response.headers)))) message.setHeader(name, value);
    message.status = response.status;
    message.setBody(response.body.length === 0 ? null : response.body);
  },
});
