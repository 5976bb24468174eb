import { endToEnd, headerTable } from '../shared/http/hop-by-hop.js';
import { bodyOf, headerMap, headerRecord, queryMap, queryString } from './outgoing/outgoing-params.js';
import { send } from './outgoing/send.js';
import { defineDirective } from '../engine/directive-types.js';

/** How long a LocalCall or an Event waits for the other API (Push's default). */
export const LOCAL_CALL_TIMEOUT_MS = 10_000;

/**
 * The original's LocalCall: a request to another API of the same public host (`path` is
 * `/<api>/<rest>`), over the in-process bus — private APIs included, one hop deeper (a cycle ends
 * in 508), within a timeout — whose answer becomes the message: status, headers (hop-by-hop ones
 * dropped) and body. An answer >= 400 is not an error (the original's convention): the flow reads
 * `$.message.status`. Only the given headers are sent, never the client's.
 */
export default defineDirective({
  name: 'LocalCall',
  summary:
    'Calls another API of this host over the in-process bus (method, path /<api>/…, headers, queryParams, body); its answer becomes the message.',
  example: { method: 'GET', path: '/users/42', headers: { accept: 'application/json' } },
  params: {
    type: 'object',
    properties: {
      method: { type: 'string', pattern: '^[A-Za-z]+$', default: 'GET' },
      path: { type: 'string', pattern: '^/[a-z0-9]' },
      headers: headerMap,
      queryParams: queryMap,
      body: {},
    },
    required: ['path'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const headers = headerRecord(params.headers);
    const response = await send(ctx, {
      host: ctx.api.localBaseUrl,
      path: params.path,
      verb: (params.method ?? 'GET').toUpperCase(),
      query: queryString(params.queryParams),
      headers,
      body: bodyOf(params.body, headers),
      timeoutMs: LOCAL_CALL_TIMEOUT_MS,
    });
    ctx.message.becomeResponse(response.status, endToEnd(headerTable(response.headers)), response.body);
  },
});
