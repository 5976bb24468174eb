import type { KvStore } from '../../engine/kv-store.js';
import { QuotaError } from '../../shared/errors.js';
import type { Tally } from '../../shared/quotas/tally.js';

/** The API's key-value store, with every write its quota refused added to `refusals` by quota name. */
export function kvCountingRefusals(store: KvStore, refusals: Tally): KvStore {
  const noted = <T>(write: Promise<T>): Promise<T> =>
    write.catch((error: unknown) => {
      if (error instanceof QuotaError) refusals.add(error.quota);
      throw error;
    });
  return {
    get: (key) => store.get(key),
    set: (key, value, ttlMs) => noted(store.set(key, value, ttlMs)),
    setIfAbsent: (key, value, ttlMs) => noted(store.setIfAbsent(key, value, ttlMs)),
    delete: (key) => store.delete(key),
    increment: (key, by, ttlMs) => noted(store.increment(key, by, ttlMs)),
    countInWindow: (key, by, window, keepMs) => noted(store.countInWindow(key, by, window, keepMs)),
  };
}
