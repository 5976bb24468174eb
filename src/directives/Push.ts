import { Errors } from '../shared/errors.js';
import {
  bodyOf,
  headerMap,
  headerRecord,
  upstreamFailure,
  hostOrLocal,
  queryMap,
  queryString,
} from './outgoing/outgoing-params.js';
import { send } from './outgoing/send.js';
import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'Push',
  summary:
    "Sends the message (or `body`) to host + path — by default this instance, over the bus, e.g. another API's job endpoint. POST, or PUT to path/id when `id` is given.",
  example: { path: '/jobs/jobs', body: { kind: 'report' } },
  failures: [
    { error: Errors.upstreamStatus, when: 'when the answer has a status of 400 or more (unless `verify: false`)' },
  ],
  params: {
    type: 'object',
    properties: {
      host: { type: 'string' },
      path: { type: 'string', pattern: '^/' },
      verb: { type: 'string', pattern: '^[A-Za-z]+$' },
      id: { type: ['string', 'number'] },
      headers: headerMap,
      queryParams: queryMap,
      body: {},
      verify: { type: 'boolean', default: true },
    },
    required: ['path'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const headers = params.headers !== undefined ? headerRecord(params.headers) : {};
    let body: Buffer | string | null;
    if ('body' in params) body = bodyOf(params.body, headers);
    else {
      // The message as it is: its body, and its content-type so the receiver can read it.
      body = ctx.message.body;
      const type = ctx.message.header('content-type');
      if (typeof type === 'string') headers['content-type'] ??= type;
    }
    const hasId = params.id !== undefined && params.id !== null && params.id !== '';
    const path = hasId ? `${params.path.replace(/\/+$/, '')}/${encodeURIComponent(String(params.id))}` : params.path;
    const host = hostOrLocal(ctx, params.host);
    const response = await send(ctx, {
      host,
      path,
      verb: params.verb ?? (hasId ? 'PUT' : 'POST'),
      query: queryString(params.queryParams),
      headers,
      body,
      timeoutMs: 10_000,
    });
    if ((params.verify ?? true) && response.status >= 400) {
      throw upstreamFailure(response.status, `${host}${path}`);
    }
  },
});
