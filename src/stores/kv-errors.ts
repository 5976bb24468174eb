import { AnvilError } from '../errors.js';

/**
 * The coded errors of the key-value store (ANVIL_ERR_KV_…). Misuse by a caller (a key too long, a
 * bad ttl) is a 500 of the directive that made the call; a store that cannot be reached is a 503,
 * so a caller such as RateLimit can tell "store down" (fail open or closed, its choice) from a bug.
 */
export const KvErrors = {
  badArgument: (what: string) => new AnvilError('ANVIL_ERR_KV_BAD_ARGUMENT', 500, `key-value store: ${what}`),
  keyTooLong: (bytes: number, limit: number) =>
    new AnvilError('ANVIL_ERR_KV_KEY_TOO_LONG', 500, `key-value store: the key is ${bytes} bytes, the limit is ${limit} bytes`),
  valueTooLarge: (bytes: number, limit: number) =>
    new AnvilError('ANVIL_ERR_KV_VALUE_TOO_LARGE', 500, `key-value store: the value is ${bytes} bytes, the limit is ${limit} bytes`),
  notInteger: () =>
    new AnvilError('ANVIL_ERR_KV_NOT_INTEGER', 500, 'key-value store: increment on a key whose value is not an integer'),
  outOfRange: () =>
    new AnvilError('ANVIL_ERR_KV_OUT_OF_RANGE', 500, 'key-value store: the counter would leave the safe integer range (±2^53-1); it was left unchanged'),
  unavailable: (detail: string) => new AnvilError('ANVIL_ERR_KV_UNAVAILABLE', 503, `key-value store unavailable: ${detail}`),
  closed: () => new AnvilError('ANVIL_ERR_KV_CLOSED', 503, 'key-value store: the backend is closed'),
  failed: (detail: string) => new AnvilError('ANVIL_ERR_KV_FAILED', 500, `key-value store: ${detail}`),
} as const;
