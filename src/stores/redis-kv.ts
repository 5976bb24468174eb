/**
 * The Redis key-value store (ioredis), shared by every instance pointing at the same Redis.
 *
 * Keys: `<prefix><byte length of ns>:<ns>:<key>`, e.g. `anvil:19:localhost/dev/users:hits`. The
 * length prefix makes the mapping injective: the namespace is read back by its length, so no key
 * string of one namespace can spell another's (`ns="a", key="b:c"` ≠ `ns="a:b", key="c"`).
 *
 * `increment` is one Lua script (one round trip, atomic in Redis): INCRBY, then PEXPIRE only when
 * the key has no expiry yet (new, or expired and so gone), then PTTL. Never read-then-write in two
 * calls (Kong#5311, SECURITY.md).
 *
 * Connection: `lazyConnect: false`, `maxRetriesPerRequest: 1`, `enableOfflineQueue: true`, and
 * `autoResendUnfulfilledCommands: false` so an increment whose reply was lost with the connection
 * is rejected, never sent twice. While Redis cannot be reached every call rejects with
 * ANVIL_ERR_KV_UNAVAILABLE (503); the caller decides whether to fail open or closed. ioredis keeps
 * reconnecting in the background, so the store recovers by itself.
 */
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';
import { AnvilError } from '../errors.js';
import { checkIncrement, checkKey, checkNamespace, checkTtl, checkValue } from './kv-checks.js';
import { KvErrors } from './kv-errors.js';
import type { KvBackend, KvStore } from './kv-store.js';

export const REDIS_KV_DEFAULTS = {
  prefix: 'anvil:',
  connectTimeoutMs: 5000,
  commandTimeoutMs: 5000,
} as const;

export interface RedisKvOptions {
  url: string;
  /** Prefix of every key, default `anvil:`. */
  prefix?: string | undefined;
}

/** The Redis key of `key` in namespace `ns`. */
export function redisKey(prefix: string, ns: string, key: string): string {
  return `${prefix}${Buffer.byteLength(ns)}:${ns}:${key}`;
}

// Lua numbers are doubles: the range check is exact at ±(2^53-1), which is where JS needs it.
const INCREMENT_LUA = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if value > 9007199254740991 or value < -9007199254740991 then
  redis.call('DECRBY', KEYS[1], ARGV[1])
  return redis.error_reply('ANVIL_OUT_OF_RANGE counter would leave the safe integer range')
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {value, ttl}
`;

type ScriptedRedis = Redis & { anvilIncrement(key: string, by: string, ttlMs: string): Promise<[number, number]> };

/** The URL without its credentials, for messages. */
function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username) parsed.username = '***';
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured Redis';
  }
}

export class RedisKvBackend implements KvBackend {
  readonly prefix: string;
  private readonly redis: ScriptedRedis;
  private readonly where: string;
  private lastError: Error | undefined;
  private closed = false;

  static open(options: RedisKvOptions): RedisKvBackend {
    if (typeof options.url !== 'string' || options.url === '') throw KvErrors.badArgument('the Redis URL must be a non-empty string');
    const prefix = options.prefix ?? REDIS_KV_DEFAULTS.prefix;
    if (typeof prefix !== 'string') throw KvErrors.badArgument('the Redis key prefix must be a string');
    return new RedisKvBackend(options.url, prefix);
  }

  private constructor(url: string, prefix: string) {
    this.prefix = prefix;
    this.where = describeUrl(url);
    const options: RedisOptions = {
      lazyConnect: false,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
      autoResendUnfulfilledCommands: false,
      connectTimeout: REDIS_KV_DEFAULTS.connectTimeoutMs,
      commandTimeout: REDIS_KV_DEFAULTS.commandTimeoutMs,
    };
    // Loaded here, not at import: a thread without Redis never pays for loading ioredis.
    const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    this.redis = new RedisClient(url, options) as ScriptedRedis;
    this.redis.defineCommand('anvilIncrement', { numberOfKeys: 1, lua: INCREMENT_LUA });
    // Without a listener ioredis prints every failed reconnection; keep the last for messages.
    this.redis.on('error', (error: Error) => {
      this.lastError = error;
    });
    this.redis.on('ready', () => {
      this.lastError = undefined;
    });
  }

  namespace(ns: string): KvStore {
    checkNamespace(ns);
    const at = (key: string) => redisKey(this.prefix, ns, key);
    return {
      get: async (key) => {
        checkKey(key);
        return this.call(() => this.redis.get(at(key)));
      },
      set: async (key, value, ttlMs) => {
        checkKey(key);
        checkValue(value);
        const ttl = checkTtl(ttlMs, false);
        await this.call(() => (ttl === undefined ? this.redis.set(at(key), value) : this.redis.set(at(key), value, 'PX', ttl)));
      },
      delete: async (key) => {
        checkKey(key);
        await this.call(() => this.redis.unlink(at(key)));
      },
      increment: async (key, by, ttlMs) => {
        checkKey(key);
        checkIncrement(by);
        const ttl = checkTtl(ttlMs, true) as number;
        const [value, left] = await this.call(() => this.redis.anvilIncrement(at(key), String(by), String(ttl)));
        return { value: Number(value), ttlMs: Number(left) };
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.redis.status === 'ready') {
      try {
        await this.redis.quit();
        return;
      } catch {
        // fall through: drop the connection
      }
    }
    this.redis.disconnect();
  }

  private async call<T>(command: () => Promise<T>): Promise<T> {
    if (this.closed) throw KvErrors.closed();
    try {
      return await command();
    } catch (error) {
      throw this.translate(error);
    }
  }

  private translate(error: unknown): AnvilError {
    if (error instanceof AnvilError) return error;
    if (this.closed) return KvErrors.closed();
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof Error && error.name === 'ReplyError') {
      if (message.includes('ANVIL_OUT_OF_RANGE') || message.includes('overflow')) return KvErrors.outOfRange();
      if (message.includes('not an integer')) return KvErrors.notInteger();
      return KvErrors.failed(`Redis replied: ${message}`);
    }
    const cause = this.lastError && this.lastError.message !== message ? `${message}; last connection error: ${this.lastError.message}` : message;
    return KvErrors.unavailable(`cannot reach Redis at ${this.where} (${cause})`);
  }
}
