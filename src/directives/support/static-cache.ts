import type { DirectiveContext } from '../../engine/context.js';

/** A response kept by CacheStatic for Smart to answer from. */
export interface CachedResponse {
  status: number;
  headers: Record<string, string | string[]>;
  /** base64 */
  body: string;
}

/** The request as it arrived (not as directives edited it): the key of the static cache. */
export function staticCacheKey(ctx: DirectiveContext): string {
  const verb = ctx.request.verb === 'HEAD' ? 'GET' : ctx.request.verb;
  return `static:${verb} ${ctx.request.path}${ctx.request.query ? `?${ctx.request.query}` : ''}`;
}

/** Content types CacheStatic treats as static (SPEC §7: css, js, images, fonts, audio). */
export function isStaticType(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return (
    type === 'text/css' ||
    type === 'text/javascript' ||
    type === 'application/javascript' ||
    type.startsWith('image/') ||
    type.startsWith('font/') ||
    type.startsWith('audio/') ||
    type === 'application/font-woff' ||
    type === 'application/vnd.ms-fontobject'
  );
}
