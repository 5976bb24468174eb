import type { HeaderValue, QueryValue } from '../engine/message.js';
import { defineDirective } from '../engine/directive-types.js';

const scalar = { type: ['string', 'number', 'boolean'] } as const;
const headerMap = {
  type: 'object',
  additionalProperties: { anyOf: [scalar, { type: 'array', items: scalar }] },
} as const;

export default defineDirective({
  name: 'ModifyMessage',
  summary:
    'Edits the message: verb, path, headers (replaces all), addHeaders (adds to them), queryParams (replaces all), body, status.',
  example: { status: 201, headers: { 'content-type': 'application/json' }, body: { id: '$.memory.id' } },
  params: {
    type: 'object',
    properties: {
      verb: { type: 'string', pattern: '^[A-Za-z]+$' },
      path: { type: 'string', pattern: '^/' },
      headers: headerMap,
      addHeaders: headerMap,
      queryParams: { type: 'object', additionalProperties: { anyOf: [scalar, { type: 'array', items: scalar }] } },
      body: {},
      status: { type: 'integer', minimum: 100, maximum: 599 },
    },
    additionalProperties: false,
  },
  run(ctx, params) {
    const message = ctx.message;
    if (params.verb !== undefined) message.verb = params.verb.toUpperCase();
    if (params.path !== undefined) message.path = params.path;
    if (params.headers !== undefined)
      message.replaceHeaders(stringValues(params.headers) as Record<string, HeaderValue>);
    if (params.addHeaders !== undefined)
      for (const [name, value] of Object.entries(stringValues(params.addHeaders))) message.addHeader(name, value);
    if (params.queryParams !== undefined)
      message.query = stringValues(params.queryParams) as Record<string, QueryValue>;
    if ('body' in params) message.setBody(params.body);
    if (params.status !== undefined) message.status = params.status;
  },
});

function stringValues(map: Record<string, unknown>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(map)) {
    if (value === null || value === undefined) continue;
    out[key] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return out;
}
