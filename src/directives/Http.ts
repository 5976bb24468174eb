import { Errors } from '../shared/errors.js';
import { endToEnd, headerTable } from '../shared/http/hop-by-hop.js';
import { send } from './outgoing/send.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Forwards the current message to `host` (its verb, path relative to the API, query, body, and
 * headers minus hop-by-hop ones) and makes the upstream's answer the message. Redirects are not
 * followed. To this instance's own address the request goes over the in-process bus. Bodies are
 * held in memory on their way (at most 10 MiB), not streamed: see docs/directives-in-practice.md.
 */
export default defineDirective({
  name: 'Http',
  summary: 'Proxies the current message to `host` and replaces it with the upstream response (no redirects followed).',
  example: { host: 'https://api.example.com', timeout: 10 },
  failures: [
    { error: Errors.upstreamTimeout, when: 'when the upstream does not answer within `timeout`' },
    { error: Errors.upstreamFailed, when: 'when the upstream cannot be reached' },
    { error: Errors.upstreamTooLarge, when: 'when its answer is larger than 10 MiB' },
  ],
  params: {
    type: 'object',
    properties: {
      host: { type: 'string', minLength: 1 },
      timeout: { type: 'number', exclusiveMinimum: 0, maximum: 300, default: 30 },
      connectTimeout: { type: 'number', exclusiveMinimum: 0, maximum: 60, default: 5 },
    },
    required: ['host'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const message = ctx.message;
    const body = message.body;
    const response = await send(ctx, {
      host: params.host,
      path: message.path,
      verb: message.verb,
      query: message.queryString,
      headers: endToEnd(message.headers),
      body: body === null || (typeof body === 'string' && body.length === 0) ? null : body,
      timeoutMs: Math.round((params.timeout ?? 30) * 1000),
      connectTimeoutMs: Math.round((params.connectTimeout ?? 5) * 1000),
    });
    message.becomeResponse(response.status, endToEnd(headerTable(response.headers)), response.body);
  },
});
