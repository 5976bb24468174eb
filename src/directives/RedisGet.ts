import { dataKey } from './stores/api-keys.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Reads what RedisSet kept under `key` into memory `target`; a missing or expired key gives null
 * (the original left `target` untouched: a value from an earlier step would pass for the stored one).
 */
export default defineDirective({
  name: 'RedisGet',
  summary:
    "Reads the value RedisSet kept under `key` (the API's key space, or with `global` its host and env's) into memory `target`; null when there is none.",
  example: { key: 'session', target: 'session' },
  memory: { writes: ['<target>'] },
  params: {
    type: 'object',
    properties: {
      key: { type: 'string', minLength: 1 },
      target: { type: 'string', minLength: 1 },
      global: { type: ['boolean', 'null'] },
    },
    required: ['key', 'target'],
    additionalProperties: false,
  },
  async run(ctx, { key, target, global }) {
    const text = await (global === true ? ctx.api.envKv : ctx.api.kv).get(dataKey(key));
    ctx.memory.set(target, text === null ? null : JSON.parse(text));
  },
});
