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
import { AnvilError, Errors } from '../errors.js';
import { checkIncrement, checkKey, checkNamespace, checkQuota, checkTtl, checkValue } from './kv-checks.js';
import type { KvBackend, KvQuota, KvStore } from './kv-store.js';

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

// Every script: KEYS = the data key, then the namespace's bytes, sizes and expiry; the key as the
// API wrote it is an argument (its entry in sizes and expiry). A quota of '' is none.
const ACCOUNTING_LUA = `
local function now_ms()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local function reap(now, limit)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, limit)
  for _, member in ipairs(gone) do
    local size = redis.call('HGET', KEYS[3], member)
    if size then
      redis.call('DECRBY', KEYS[2], size)
      redis.call('HDEL', KEYS[3], member)
    end
    redis.call('ZREM', KEYS[4], member)
  end
end
local function used()
  return tonumber(redis.call('GET', KEYS[2]) or '0')
end
local function counted(key)
  return tonumber(redis.call('HGET', KEYS[3], key) or '0')
end
-- Whether a write that makes \`key\` take \`size\` bytes fits the quota (a write that does not grow always does).
local function fits(key, size, quota, now)
  if quota == '' or size <= counted(key) then return true end
  if used() - counted(key) + size <= tonumber(quota) then return true end
  reap(now, 10000)
  return used() - counted(key) + size <= tonumber(quota)
end
local function account(key, size, expires_at)
  redis.call('INCRBY', KEYS[2], size - counted(key))
  redis.call('HSET', KEYS[3], key, size)
  if expires_at then redis.call('ZADD', KEYS[4], expires_at, key) else redis.call('ZREM', KEYS[4], key) end
end
`;

// ARGV: key, value, ttl ms ('' = none), quota, '1' to write only when the key holds no value.
// Returns {1, 0}, {2, 0} when the key held a value (nothing written), or {0, bytes the write would make}.
const SET_LUA = `${ACCOUNTING_LUA}
local now = now_ms()
reap(now, 100)
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then return {2, 0} end
local size = string.len(ARGV[1]) + string.len(ARGV[2])
if not fits(ARGV[1], size, ARGV[4], now) then return {0, used() - counted(ARGV[1]) + size} end
if ARGV[3] == '' then
  redis.call('SET', KEYS[1], ARGV[2])
  account(ARGV[1], size, nil)
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  account(ARGV[1], size, now + tonumber(ARGV[3]))
end
return {1, 0}
`;

// ARGV: key.
const DELETE_LUA = `${ACCOUNTING_LUA}
redis.call('UNLINK', KEYS[1])
redis.call('DECRBY', KEYS[2], counted(ARGV[1]))
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
`;

// ARGV: by, ttl ms, key, quota. INCRBY checks the value (an integer) and is undone when the result
// leaves ±(2^53-1) (Lua numbers are doubles: the check is exact there, where JS needs it) or the
// quota; PEXPIRE only when the key has no expiry yet (new, or expired and so gone).
const INCREMENT_LUA = `${ACCOUNTING_LUA}
local now = now_ms()
reap(now, 100)
local existed = redis.call('EXISTS', KEYS[1])
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
local function undo()
  if existed == 0 then redis.call('DEL', KEYS[1]) else redis.call('DECRBY', KEYS[1], ARGV[1]) end
end
if value > 9007199254740991 or value < -9007199254740991 then
  undo()
  return redis.error_reply('ANVIL_OUT_OF_RANGE counter would leave the safe integer range')
end
local size = string.len(ARGV[3]) + redis.call('STRLEN', KEYS[1])
if not fits(ARGV[3], size, ARGV[4], now) then
  local would = used() - counted(ARGV[3]) + size
  undo()
  return redis.error_reply('ANVIL_KV_QUOTA ' .. would)
end
local ttl = redis.call('PTTL', KEYS[1])
local expires_at = nil
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
  expires_at = now + ttl
else
  expires_at = tonumber(redis.call('ZSCORE', KEYS[4], ARGV[3]) or (now + ttl))
end
account(ARGV[3], size, expires_at)
return {value, ttl}
`;

type ScriptedRedis = Redis & {
  anvilSet(key: string, bytes: string, sizes: string, expiry: string, name: string, value: string, ttlMs: string, quota: string, onlyIfAbsent: string): Promise<[number, number]>;
  anvilDelete(key: string, bytes: string, sizes: string, expiry: string, name: string): Promise<number>;
  anvilIncrement(key: string, bytes: string, sizes: string, expiry: string, by: string, ttlMs: string, name: string, quota: string): Promise<[number, number]>;
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
    if (typeof options.url !== 'string' || options.url === '') throw Errors.kvBadArgument('the Redis URL must be a non-empty string');
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
    const write = async (key: string, value: string, ttlMs: number | undefined, onlyIfAbsent: '' | '1'): Promise<number> => {
      checkKey(key);
      checkValue(value);
      const ttl = checkTtl(ttlMs, false);
      const [written, would] = await this.call(() =>
        this.redis.anvilSet(at(key), usage.bytes, usage.sizes, usage.expiry, key, value, ttl === undefined ? '' : String(ttl), max, onlyIfAbsent),
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
        const [value, left] = await this.call(() => this.redis.anvilIncrement(at(key), usage.bytes, usage.sizes, usage.expiry, String(by), String(ttl), key, max), quota);
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
      return Errors.kvFailed(`Redis replied: ${message}`);
    }
    const cause = this.lastError && this.lastError.message !== message ? `${message}; last connection error: ${this.lastError.message}` : message;
    return Errors.kvUnavailable(`cannot reach Redis at ${this.where} (${cause})`);
  }
}
