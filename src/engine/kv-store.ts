/**
 * The key-value store behind RateLimit's counters, Pull's `cache` and the CacheStatic cache.
 *
 * One interface, two backends: embedded (a SQLite file shared by every thread of every cell
 * process of the instance) and Redis (shared by several instances). Each API sees the store only
 * through its namespace view (`<host>/<env>/<key>`). No type of better-sqlite3 or ioredis goes
 * past this folder. Every failure is a rejected promise carrying a coded error (the kv… entries of src/shared/errors/catalogue.ts).
 *
 * Limits (kv-checks.ts): key and namespace ≤ 1 KiB, value ≤ 5 MiB (UTF-8 bytes), all well-formed
 * Unicode.
 *
 * The types only: the backends implement them, and open-kv.ts picks one.
 */
import type { CountWindow, WindowCount } from './window-counter.js';

export interface KvStore {
  get(key: string): Promise<string | null>;
  /** No ttl = no expiry (and an earlier ttl of the key is dropped). */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /**
   * `set`, only when the key holds no value (none, or an expired one), in one atomic step; true when
   * it stored. A key that holds a value keeps it, and its ttl.
   */
  setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean>;
  delete(key: string): Promise<void>;
  /**
   * Atomically adds `by` (integer) to a counter; a missing or expired counter starts at `by` and
   * expires after ttlMs. Returns the new value and the ms left until it expires. Exact under
   * concurrency across threads, processes and (Redis) instances.
   *
   * The ttl is set by the increment that creates the counter and kept by later ones (fixed window);
   * a key holding an integer string without expiry (from `set`) gets one. Rejects when the key holds
   * a non-integer value or the result would leave ±(2^53-1); the counter is then unchanged.
   */
  increment(key: string, by: number, ttlMs: number): Promise<{ value: number; ttlMs: number }>;
  /**
   * Counts `by` (an integer) in the fixed window the caller's clock is in, in one atomic step, and
   * returns the count and the end of the window it was counted in, which a clock step can make
   * differ from `window.endsAt` (window-counter.ts has the rule: no step of any clock grants a
   * request twice). The value is `<count>@<window end>`; the store forgets the key after `keepMs`.
   * Rejects when the key holds another kind of value or the count would leave ±(2^53-1).
   */
  countInWindow(key: string, by: number, window: CountWindow, keepMs: number): Promise<WindowCount>;
}

/** What one namespace (an API) may hold: UTF-8 bytes of its keys and values, an integer as its decimal text. */
export interface KvQuota {
  maxBytes: number;
}

export interface KvBackend {
  /**
   * A view of the store where every key is prefixed by the namespace (an API: `<host>/<env>/<key>`);
   * no key of one namespace can be read or written through another's view, whatever the key
   * string contains.
   *
   * Every backend counts each namespace's bytes. With a quota, a `set` or `increment` that would
   * grow the namespace past it is refused with ANVIL_ERR_QUOTA_KV_BYTES (507) and changes nothing;
   * a write that does not grow it (an overwrite with a value as small, a delete) always passes,
   * also when a lowered quota left the namespace above it. Expired keys stop counting once the
   * backend notices them (at the latest when a write would otherwise be refused).
   */
  namespace(ns: string, quota?: KvQuota): KvStore;
  close(): Promise<void>;
}

export interface KvBackendOptions {
  /** The instance's data directory; the embedded store lives in `<dataDir>/.anvil/kv.sqlite`. */
  dataDir: string;
  /** When set, Redis (several instances may share it). */
  redisUrl?: string;
  /** Prefix of every Redis key, default `anvil:`. */
  redisPrefix?: string;
  /** The embedded store's clock for TTLs, epoch ms (Redis keeps its own). Default `Date.now`. */
  now?: () => number;
}
