import type { KvStore } from '../stores/kv-store.js';
import { QuotaError } from './quota-errors.js';

/**
 * The quota refusals one actor thread met since its last report: the thread sends them with its
 * stats (ThreadStats.quotaRefusals) and the router counts them in `anvil_quota_refusals_total`.
 */
export class RefusalTally {
  private counts = new Map<string, number>();

  note(error: unknown): void {
    if (error instanceof QuotaError && error.quota !== '') this.counts.set(error.quota, (this.counts.get(error.quota) ?? 0) + 1);
  }

  /** [quota, refusals] since the last take, or undefined when there were none. */
  take(): Array<[string, number]> | undefined {
    if (this.counts.size === 0) return undefined;
    const taken = [...this.counts];
    this.counts = new Map();
    return taken;
  }
}

/** The API's key-value store, with every write its quota refused noted in `tally`. */
export function kvCountingRefusals(store: KvStore, tally: RefusalTally): KvStore {
  const noted = <T>(write: Promise<T>): Promise<T> =>
    write.catch((error: unknown) => {
      tally.note(error);
      throw error;
    });
  return {
    get: (key) => store.get(key),
    set: (key, value, ttlMs) => noted(store.set(key, value, ttlMs)),
    delete: (key) => store.delete(key),
    increment: (key, by, ttlMs) => noted(store.increment(key, by, ttlMs)),
  };
}
