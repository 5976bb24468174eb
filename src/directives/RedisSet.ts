import { dataKey } from './stores/api-keys.js';
import { defineDirective } from '../engine/directive-types.js';

/** Seconds a value is kept when `expire` is not given (the original's default). */
export const DEFAULT_EXPIRE_S = 600;

/**
 * Keeps `value` as JSON under `key` in the API's key space (ORIGINAL §4.9), or with `global` in the
 * space every API of its public host and env shares. Any JSON value is kept, scalars included (the
 * original kept an empty value for anything but a map or a list); null deletes the key.
 */
export default defineDirective({
  name: 'RedisSet',
  summary:
    "Keeps `value` (any JSON value; null deletes) under `key` for `expire` seconds (default 600) in the API's key space, " +
    'or with `global` in the one its public host and env share; on the embedded store, or Redis with REDIS_URL.',
  example: { key: 'session', value: '$.memory.session', expire: 3600 },
  params: {
    type: 'object',
    properties: {
      key: { type: 'string', minLength: 1 },
      value: {},
      expire: { type: ['number', 'null'], exclusiveMinimum: 0, maximum: 31_536_000, default: 600 },
      global: { type: ['boolean', 'null'] },
    },
    required: ['key', 'value'],
    additionalProperties: false,
  },
  async run(ctx, { key, value, expire, global }) {
    const store = global === true ? ctx.api.envKv : ctx.api.kv;
    if (value === null || value === undefined) await store.delete(dataKey(key));
    else await store.set(dataKey(key), JSON.stringify(value), (expire ?? DEFAULT_EXPIRE_S) * 1000);
  },
});
