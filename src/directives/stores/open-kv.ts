import { EmbeddedKvBackend } from './embedded-kv.js';
import type { KvBackend, KvBackendOptions } from '../../engine/kv-store.js';
import { RedisKvBackend } from './redis-kv.js';

/** Redis when `redisUrl` is set, else the embedded SQLite store. Each thread opens its own. */
export function openKvBackend(options: KvBackendOptions): KvBackend {
  if (options.redisUrl) return RedisKvBackend.open({ url: options.redisUrl, prefix: options.redisPrefix });
  return EmbeddedKvBackend.open({ dataDir: options.dataDir, now: options.now });
}
