import { hash, timingSafeEqual } from 'node:crypto';

/** Digests of the expected sides seen lately: an API compares against the same key on every request. */
const expectedDigests = new Map<string, Buffer>();
const REMEMBERED = 64;

/**
 * Compares two secrets in time that does not depend on where they differ or on their lengths:
 * both sides are hashed to fixed-size digests first.
 */
export function safeEqual(expected: string, actual: string): boolean {
  let a = expectedDigests.get(expected);
  if (a === undefined) {
    a = digest(expected);
    if (expectedDigests.size >= REMEMBERED) expectedDigests.delete(expectedDigests.keys().next().value!);
    expectedDigests.set(expected, a);
  }
  return timingSafeEqual(a, digest(actual)) && expected.length === actual.length;
}

function digest(value: string): Buffer {
  return hash('sha256', value, 'buffer') as unknown as Buffer;
}
