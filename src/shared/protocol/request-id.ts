import { randomBytes } from 'node:crypto';

/**
 * Request ids unique across restarts and instances without coordination: a prefix made of the
 * boot time and random bits, then a counter. Cheap enough for every request.
 */
export function requestIdGenerator(): () => string {
  const prefix = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}-`;
  let counter = 0;
  return () => prefix + (counter++).toString(36);
}
