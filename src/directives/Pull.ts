import { Errors } from '../shared/errors.js';
import { endToEnd, headerTable } from '../shared/http/hop-by-hop.js';
import { cacheWhenReachable } from './stores/cache-when-reachable.js';
import { bodyOf, headerMap, headerRecord, upstreamFailure, queryMap, queryString } from './outgoing/outgoing-params.js';
import { send, type UpstreamResponse } from './outgoing/send.js';
import { checkAgainstSchema, schemaName } from './support/pull-schema.js';
import { defineDirective } from '../engine/directive-types.js';

/** Memory key of the status of the last answer a Pull got (also when it went into `target`). */
export const PULL_STATUS_KEY = 'pullStatus';

export default defineDirective({
  name: 'Pull',
  summary:
    'Requests host + path (POST when a body is given) and stores the parsed JSON answer in memory `target` (checked against Maps/<target>.json when there is one), or without `target` makes the answer the message (with `target` too under `compat: hefesto`, as the original did); to this instance it goes over the in-process bus.',
  example: { host: 'https://api.example.com', path: '/rates', queryParams: { base: 'EUR' }, target: 'rates' },
  memory: { writes: ['<target>', 'pullStatus'] },
  failures: [
    { error: Errors.upstreamStatus, when: 'when the answer has a status of 400 or more (unless `verify: false`)' },
    { error: Errors.pullSchemaMismatch, when: 'when the answer does not match the schema it is checked against' },
    { error: Errors.upstreamTimeout, when: 'when the upstream does not answer within `timeout`' },
  ],
  params: {
    type: 'object',
    properties: {
      host: { type: 'string', minLength: 1 },
      path: { type: 'string', pattern: '^/', default: '/' },
      target: { type: 'string', minLength: 1 },
      schema: { type: ['string', 'boolean'], minLength: 1 },
      queryParams: queryMap,
      headers: headerMap,
      body: {},
      cache: { type: 'integer', minimum: 0, maximum: 86_400 },
      timeout: { type: 'number', exclusiveMinimum: 0, maximum: 300, default: 10 },
      verify: { type: 'boolean', default: true },
    },
    required: ['host'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const headers = headerRecord(params.headers);
    headers.accept ??= 'application/json';
    const body = bodyOf(params.body, headers);
    const request = {
      host: params.host,
      path: params.path ?? '/',
      verb: body === null ? 'GET' : 'POST',
      query: queryString(params.queryParams),
      headers,
      body,
      timeoutMs: Math.round((params.timeout ?? 10) * 1000),
    };

    const log = ctx.api.log.bind(ctx.api);
    const cacheKey = params.cache
      ? `pull:${JSON.stringify([request.host, request.path, request.verb, request.query, headers, body])}`
      : null;
    let response: UpstreamResponse | null = null;
    if (cacheKey !== null) {
      const cached = await cacheWhenReachable(log, 'Pull', () => ctx.api.kv.get(cacheKey));
      if (cached !== null) response = revive(cached);
    }
    if (response === null) {
      response = await send(ctx, request);
      const fresh = response;
      if (cacheKey !== null && fresh.status < 400)
        await cacheWhenReachable(log, 'Pull', () => ctx.api.kv.set(cacheKey, freeze(fresh), params.cache! * 1000));
    }

    ctx.memory.set(PULL_STATUS_KEY, response.status);
    const where = `${request.host}${request.path}`;
    if ((params.verify ?? true) && response.status >= 400) throw upstreamFailure(response.status, where);
    const schema = schemaName(ctx, params.schema, params.target);
    const value = params.target !== undefined || schema !== null ? parse(response.body) : null;
    if (schema !== null && response.status < 300) checkAgainstSchema(ctx, schema, value, where);
    if (params.target !== undefined) ctx.memory.set(params.target, value);
    // The answer (status, headers, body) becomes the message: without `target`, as in the original;
    // with it too under `compat: hefesto` (the original's endpoints that call another endpoint and
    // answer with its answer rely on it).
    if (params.target === undefined || ctx.api.compat === 'hefesto')
      ctx.message.becomeResponse(response.status, endToEnd(headerTable(response.headers)), response.body);
  },
});

/** JSON when the body is JSON, the text otherwise, null when empty. */
function parse(body: Buffer): unknown {
  if (body.length === 0) return null;
  const text = body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function freeze(response: UpstreamResponse): string {
  return JSON.stringify({ status: response.status, headers: response.headers, body: response.body.toString('base64') });
}

function revive(text: string): UpstreamResponse {
  const value = JSON.parse(text) as { status: number; headers: string[]; body: string };
  return { status: value.status, headers: value.headers, body: Buffer.from(value.body, 'base64') };
}
