import { cacheWhenReachable } from '../stores/cache-when-reachable.js';
import { isStaticType, staticCacheKey, type CachedResponse } from '../http/static-cache.js';
import { defineDirective } from './types.js';

interface Params {
  expiresMinutes?: number;
  expirationMinutes?: number;
}

const minutes = { type: 'number', exclusiveMinimum: 0, maximum: 525_600 };

/**
 * For a static answer (css, js, images, fonts, audio, status 200) sets `cache-control: public,
 * max-age` and `expires`, and keeps the answer in the API's cache so that Smart answers the same
 * request from it until it expires. Anything else passes untouched.
 */
export default defineDirective<Params>({
  name: 'CacheStatic',
  summary: 'Marks static answers cacheable for expiresMinutes (default 5) and keeps them for Smart to answer from.',
  params: {
    type: 'object',
    properties: { expiresMinutes: minutes, expirationMinutes: minutes },
    additionalProperties: false,
  },
  async run(ctx, params) {
    const message = ctx.message;
    const type = message.header('content-type');
    if (message.status !== 200 || typeof type !== 'string' || !isStaticType(type)) return;
    const ttlSeconds = Math.round((params.expiresMinutes ?? params.expirationMinutes ?? 5) * 60);
    message.setHeader('cache-control', `public, max-age=${ttlSeconds}`);
    message.setHeader('expires', new Date(Date.now() + ttlSeconds * 1000).toUTCString());
    const body = message.body;
    const cached: CachedResponse = {
      status: 200,
      headers: message.toResponse().headers.reduce<Record<string, string | string[]>>((out, value, i, all) => {
        if (i % 2 === 0) out[value] = all[i + 1]!;
        return out;
      }, {}),
      body: body === null ? '' : Buffer.isBuffer(body) ? body.toString('base64') : Buffer.from(body).toString('base64'),
    };
    await cacheWhenReachable(ctx.api.log.bind(ctx.api), 'CacheStatic', () => ctx.api.kv.set(staticCacheKey(ctx), JSON.stringify(cached), ttlSeconds * 1000));
  },
});
