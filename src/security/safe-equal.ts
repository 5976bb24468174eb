import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets in time that does not depend on where they differ or on their lengths:
 * both sides are hashed to fixed-size digests first.
 */
export function safeEqual(expected: string, actual: string): boolean {
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(actual).digest();
  return timingSafeEqual(a, b) && expected.length === actual.length;
}
