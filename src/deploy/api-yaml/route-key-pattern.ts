/**
 * The route keys parseRouteKey (route-path.ts) accepts, as one regular expression for the JSON
 * Schema of api.yaml (`propertyNames` of `endpoints`), so an editor flags a bad verb or path as
 * the validator would. Built from the same constants; a test compares the two on generated keys.
 * What a pattern cannot see: a path parameter named twice, and two routes of the same shape.
 */
import { CATCH_ALL_PATH, VERBS } from '../../shared/api-model/types.js';

/** `get` → `[gG][eE][tT]`: verbs are case-insensitive, and a schema pattern takes no flags. */
function anyCase(word: string): string {
  return [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : escape(c))).join('');
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** A path parameter (route-path.ts PARAM_NAME) or a literal segment of RFC 3986 pchars, not `.` or `..`. */
const SEGMENT = String.raw`(?:\{[A-Za-z_][A-Za-z0-9_]*\}|(?!\.\.?(?:/|\s*$))(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+)`;
/** `/`, or segments each after a `/`, with one trailing `/` allowed. */
const PATH = String.raw`/(?:${SEGMENT}(?:/${SEGMENT})*/?)?`;

/** `<verb> <path>` with any spaces around and between, or `all /requests`. */
export const ROUTE_KEY_PATTERN = String.raw`^\s*(?:(?:${VERBS.map(anyCase).join('|')})\s+${PATH}|${anyCase('all')}\s+${escape(CATCH_ALL_PATH)}/?)\s*$`;
