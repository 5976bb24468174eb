import type { Message } from '../../engine/message.js';

/** Minutes a cache directive (CacheStatic, CacheUrl) accepts. */
export const CACHE_MINUTES_SCHEMA = { type: 'number', exclusiveMinimum: 0, maximum: 525_600 } as const;

/** `cache-control: public, max-age=<seconds>` and `expires` = now + seconds; returns the seconds. */
export function markCacheable(message: Message, minutes: number): number {
  const seconds = Math.round(minutes * 60);
  message.setHeader('cache-control', `public, max-age=${seconds}`);
  message.setHeader('expires', new Date(Date.now() + seconds * 1000).toUTCString());
  return seconds;
}
