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
 * Quota: Redis forgets an expired key by itself and tells no one, so each namespace's bytes are
 * kept beside its keys, under `<prefix>kv-usage:<byte length of ns>:<ns>:` (a data key has a digit
 * where these have `k`): `bytes` (the total), `sizes` (a hash: key → the bytes it was counted for)
 * and `expiry` (a sorted set: key → when it expires). Every write is one Lua script that first
 * forgets the keys whose expiry passed (up to 100 at a time; up to 10 000 more before refusing a
 * write), then checks the quota, writes, and counts, with Redis's own clock (TIME) for the expiry
 * it sets and the one it reaps. Keys written before this accounting existed count from their next
 * write.
 *
 * Connection: `lazyConnect: false`, `maxRetriesPerRequest: 1`, `enableOfflineQueue: true`, and
 * `autoResendUnfulfilledCommands: false` so an increment whose reply was lost with the connection
 * is rejected, never sent twice. While Redis cannot be reached every call rejects with
 * ANVIL_ERR_KV_UNAVAILABLE (503); the caller decides whether to fail open or closed. ioredis keeps
 * reconnecting in the background, so the store recovers by itself.
 */
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';
import { AnvilError, Errors } from '../../shared/errors.js';
import {
  checkIncrement,
  checkKey,
  checkNamespace,
  checkQuota,
  checkTtl,
  checkValue,
  checkWindow,
} from './kv-checks.js';
import type { KvBackend, KvQuota, KvStore } from '../../engine/kv-store.js';
import { DELETE_LUA, INCREMENT_LUA, SET_LUA, WINDOW_COUNT_LUA } from './redis-kv-lua.js';

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

/** The keys that hold a namespace's accounting (see the header). */
export function usageKeys(prefix: string, ns: string): { bytes: string; sizes: string; expiry: string } {
  const base = `${prefix}kv-usage:${Buffer.byteLength(ns)}:${ns}:`;
  return { bytes: `${base}bytes`, sizes: `${base}sizes`, expiry: `${base}expiry` };
}

type ScriptedRedis = Redis & {
  anvilSet(
    key: string,
    bytes: string,
    sizes: string,
    expiry: string,
    name: string,
    value: string,
    ttlMs: string,
    quota: string,
    onlyIfAbsent: string,
  ): Promise<[number, number]>;
  anvilDelete(key: string, bytes: string, sizes: string, expiry: string, name: string): Promise<number>;
  anvilIncrement(
    key: string,
    bytes: string,
    sizes: string,
    expiry: string,
    by: string,
    ttlMs: string,
    name: string,
    quota: string,
  ): Promise<[number, number]>;
  anvilCountInWindow(
    key: string,
    bytes: string,
    sizes: string,
    expiry: string,
    name: string,
    by: string,
    endsAt: string,
    spanMs: string,
    keepMs: string,
    quota: string,
  ): Promise<[number, number]>;
};

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
    if (typeof options.url !== 'string' || options.url === '')
      throw Errors.kvBadArgument('the Redis URL must be a non-empty string');
    const prefix = options.prefix ?? REDIS_KV_DEFAULTS.prefix;
    if (typeof prefix !== 'string') throw Errors.kvBadArgument('the Redis key prefix must be a string');
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
    this.redis.defineCommand('anvilSet', { numberOfKeys: 4, lua: SET_LUA });
    this.redis.defineCommand('anvilDelete', { numberOfKeys: 4, lua: DELETE_LUA });
    this.redis.defineCommand('anvilIncrement', { numberOfKeys: 4, lua: INCREMENT_LUA });
    this.redis.defineCommand('anvilCountInWindow', { numberOfKeys: 4, lua: WINDOW_COUNT_LUA });
    // Without a listener ioredis prints every failed reconnection; keep the last for messages.
    this.redis.on('error', (error: Error) => {
      this.lastError = error;
    });
    this.redis.on('ready', () => {
      this.lastError = undefined;
    });
  }

  namespace(ns: string, quota?: KvQuota): KvStore {
    checkNamespace(ns);
    checkQuota(quota);
    const at = (key: string) => redisKey(this.prefix, ns, key);
    const usage = usageKeys(this.prefix, ns);
    const max = quota === undefined ? '' : String(quota.maxBytes);
    /** One SET script; 1 when it wrote, 2 when `onlyIfAbsent` found a value. */
    const write = async (
      key: string,
      value: string,
      ttlMs: number | undefined,
      onlyIfAbsent: '' | '1',
    ): Promise<number> => {
      checkKey(key);
      checkValue(value);
      const ttl = checkTtl(ttlMs, false);
      const [written, would] = await this.call(() =>
        this.redis.anvilSet(
          at(key),
          usage.bytes,
          usage.sizes,
          usage.expiry,
          key,
          value,
          ttl === undefined ? '' : String(ttl),
          max,
          onlyIfAbsent,
        ),
      );
      if (written === 0) throw Errors.quotaKvBytes(Number(would), quota!.maxBytes);
      return written;
    };
    return {
      get: async (key) => {
        checkKey(key);
        return this.call(() => this.redis.get(at(key)));
      },
      set: async (key, value, ttlMs) => {
        await write(key, value, ttlMs, '');
      },
      setIfAbsent: async (key, value, ttlMs) => (await write(key, value, ttlMs, '1')) === 1,
      delete: async (key) => {
        checkKey(key);
        await this.call(() => this.redis.anvilDelete(at(key), usage.bytes, usage.sizes, usage.expiry, key));
      },
      increment: async (key, by, ttlMs) => {
        checkKey(key);
        checkIncrement(by);
        const ttl = checkTtl(ttlMs, true) as number;
        const [value, left] = await this.call(
          () =>
            this.redis.anvilIncrement(
              at(key),
              usage.bytes,
              usage.sizes,
              usage.expiry,
              String(by),
              String(ttl),
              key,
              max,
            ),
          quota,
        );
        return { value: Number(value), ttlMs: Number(left) };
      },
      countInWindow: async (key, by, window, keepMs) => {
        checkKey(key);
        checkIncrement(by);
        checkWindow(window);
        const keep = checkTtl(keepMs, true) as number;
        const [value, endsAt] = await this.call(
          () =>
            this.redis.anvilCountInWindow(
              at(key),
              usage.bytes,
              usage.sizes,
              usage.expiry,
              key,
              String(by),
              String(window.endsAt),
              String(window.spanMs),
              String(keep),
              max,
            ),
          quota,
        );
        return { value: Number(value), endsAt: Number(endsAt) };
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

  private async call<T>(command: () => Promise<T>, quota?: KvQuota): Promise<T> {
    if (this.closed) throw Errors.kvClosed();
    try {
      return await command();
    } catch (error) {
      throw this.translate(error, quota);
    }
  }

  private translate(error: unknown, quota: KvQuota | undefined): AnvilError {
    if (error instanceof AnvilError) return error;
    if (this.closed) return Errors.kvClosed();
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof Error && error.name === 'ReplyError') {
      const refused = /ANVIL_KV_QUOTA (\d+)/.exec(message);
      if (refused !== null && quota !== undefined) return Errors.quotaKvBytes(Number(refused[1]), quota.maxBytes);
      if (message.includes('ANVIL_OUT_OF_RANGE') || message.includes('overflow')) return Errors.kvOutOfRange();
      if (message.includes('not an integer')) return Errors.kvNotInteger();
      if (message.includes('ANVIL_NOT_WINDOW'))
        return Errors.kvFailed('the key holds a value that is not a window counter');
      return Errors.kvFailed(`Redis replied: ${message}`);
    }
    const cause =
      this.lastError && this.lastError.message !== message
        ? `${message}; last connection error: ${this.lastError.message}`
        : message;
    return Errors.kvUnavailable(`cannot reach Redis at ${this.where} (${cause})`);
  }
}
