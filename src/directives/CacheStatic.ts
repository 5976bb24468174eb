import { CACHE_MINUTES_SCHEMA, markCacheable } from './support/cache-headers.js';
import { isStaticType, staticCacheKey, type CachedResponse } from './support/static-cache.js';
import { cacheWhenReachable } from './stores/cache-when-reachable.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * For a static answer (css, js, images, fonts, audio, status 200) sets `cache-control: public,
 * max-age` and `expires`, and keeps the answer in the API's cache so that Smart answers the same
 * request from it until it expires. Anything else passes untouched.
 */
export default defineDirective({
  name: 'CacheStatic',
  summary: 'Marks static answers cacheable for expiresMinutes (default 5) and keeps them for Smart to answer from.',
  example: { expiresMinutes: 60 },
  params: {
    type: 'object',
    properties: { expiresMinutes: CACHE_MINUTES_SCHEMA, expirationMinutes: CACHE_MINUTES_SCHEMA },
    additionalProperties: false,
  },
  async run(ctx, params) {
    const message = ctx.message;
    const type = message.header('content-type');
    if (message.status !== 200 || typeof type !== 'string' || !isStaticType(type)) return;
    const ttlSeconds = markCacheable(message, params.expiresMinutes ?? params.expirationMinutes ?? 5);
    const body = message.body;
    const cached: CachedResponse = {
      status: 200,
      headers: message.toResponse().headers.reduce<Record<string, string | string[]>>((out, value, i, all) => {
        if (i % 2 === 0) out[value] = all[i + 1]!;
        return out;
      }, {}),
      body: body === null ? '' : Buffer.isBuffer(body) ? body.toString('base64') : Buffer.from(body).toString('base64'),
    };
    await cacheWhenReachable(ctx.api.log.bind(ctx.api), 'CacheStatic', () =>
      ctx.api.kv.set(staticCacheKey(ctx), JSON.stringify(cached), ttlSeconds * 1000),
    );
  },
});
