import { AnvilError } from '../../shared/errors.js';

const SKIPPED = new Set(['ANVIL_ERR_KV_UNAVAILABLE', 'ANVIL_ERR_DISK_FULL']);

type Log = (level: 'warn', msg: string, fields?: Record<string, unknown>) => void;

/**
 * A cache is an optimisation: while the key-value store cannot be reached (Redis down or hung, the
 * SQLite store busy) or its disk is full, a cache read is a miss and a cache write is skipped, with
 * a warning in the API's log — the request is served without it. Any other refusal (the API's
 * quota) stays an error.
 */
export async function cacheWhenReachable<T>(log: Log, who: string, operation: () => Promise<T>): Promise<T | null> {
  try {
    return await operation();
  } catch (error) {
    if (!(error instanceof AnvilError) || !SKIPPED.has(error.code)) throw error;
    log('warn', `${who}: the cache cannot be reached, serving without it`, { error: error.message });
    return null;
  }
}
