import { CACHE_MINUTES_SCHEMA, markCacheable } from './support/cache-headers.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Marks the answer cacheable by browsers and proxies whatever its type (CacheStatic does so only
 * for static types): `cache-control: public, max-age=<seconds>` and `expires` = now +
 * `expirationMinutes` (default 5; `expiresMinutes`, CacheStatic's SPEC spelling, is read too).
 */
export default defineDirective({
  name: 'CacheUrl',
  summary: 'Sets cache-control: public, max-age and expires for expirationMinutes (default 5), whatever the answer.',
  example: { expirationMinutes: 10 },
  params: {
    type: 'object',
    properties: { expirationMinutes: CACHE_MINUTES_SCHEMA, expiresMinutes: CACHE_MINUTES_SCHEMA },
    additionalProperties: false,
  },
  run(ctx, params) {
    markCacheable(ctx.message, params.expirationMinutes ?? params.expiresMinutes ?? 5);
  },
});
