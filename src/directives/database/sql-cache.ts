/**
 * The caches keyed by SQL text: the policy's verdicts (sql-policy.ts) and each connection's
 * prepared statements (api-database.ts).
 */
import { LRUCache } from 'lru-cache';

/** A key's share of `maxChars`: its length (lru-cache wants a positive size, so `''` counts 1). */
const keyChars = (_value: unknown, key: string) => key.length || 1;

/**
 * A map that forgets its least recently used entries beyond `maxEntries`, or beyond `maxChars` of
 * keys in all (keys are SQL texts a tenant chooses: their total size is bounded, not only their number).
 * A key longer than `maxChars` is not kept. `get` makes an entry the most recently used one.
 */
export function sqlTextCache<V extends NonNullable<unknown>>(
  maxEntries: number,
  maxChars: number,
): LRUCache<string, V> {
  return new LRUCache<string, V>({ max: maxEntries, maxSize: maxChars, sizeCalculation: keyChars });
}
