import { cacheWhenReachable } from './stores/cache-when-reachable.js';
import { NORMAL_FLOW } from '../engine/groups.js';
import { endToEnd } from '../shared/http/hop-by-hop.js';
import { staticCacheKey, type CachedResponse } from './support/static-cache.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

/**
 * The proxy prelude: adds x-forwarded-for/-proto/-host and strips hop-by-hop headers from the
 * message; when CacheStatic kept a fresh answer for this request, answers with it and skips the
 * rest of NORMAL_FLOW (no upstream call).
 */
export default defineDirective({
  name: 'Smart',
  summary:
    'Proxy prelude: x-forwarded-* headers, hop-by-hop headers removed, and answers from the CacheStatic cache when it can.',
  params: noParams,
  async run(ctx) {
    const message = ctx.message;
    const verb = ctx.request.verb;
    if (verb === 'GET' || verb === 'HEAD') {
      const hit = await cacheWhenReachable(ctx.api.log.bind(ctx.api), 'Smart', () =>
        ctx.api.kv.get(staticCacheKey(ctx)),
      );
      if (hit !== null) {
        const cached = JSON.parse(hit) as CachedResponse;
        message.becomeResponse(
          cached.status,
          { ...cached.headers, 'x-anvil-cache': 'hit' },
          Buffer.from(cached.body, 'base64'),
        );
        ctx.groups.disable(NORMAL_FLOW);
        return;
      }
    }
    const headers = endToEnd(message.headers);
    const forwardedFor = headers['x-forwarded-for'];
    headers['x-forwarded-for'] = forwardedFor ? `${String(forwardedFor)}, ${ctx.request.ip}` : ctx.request.ip;
    // What this instance saw, not what the client claims: a client could otherwise pose as https.
    headers['x-forwarded-proto'] = 'http';
    const host = message.header('host');
    if (typeof host === 'string') headers['x-forwarded-host'] = host;
    else delete headers['x-forwarded-host'];
    message.rewriteRequestHeaders(headers);
  },
});
