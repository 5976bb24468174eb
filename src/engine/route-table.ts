import { CATCH_ALL_PATH, type EndpointDefinition } from '../shared/api-model/types.js';

export type RouteMatch =
  | { kind: 'endpoint'; endpoint: EndpointDefinition; pathParams: Record<string, string> }
  | { kind: 'options'; allow: string[] }
  | { kind: 'none' };

interface ParamRoute {
  endpoint: EndpointDefinition;
  /** A literal segment, or null where the route has a parameter. */
  segments: Array<string | null>;
  names: Array<string | null>;
  literalCount: number;
  order: number;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * Route matching of SPEC §3: literal routes first (one map lookup), then parameterised routes with
 * more literal segments first and declaration order after that, then the `all /requests` catch-all.
 * HEAD falls back to GET; OPTIONS without an endpoint lists the path's verbs.
 */
export class RouteTable {
  private readonly literal = new Map<string, EndpointDefinition>();
  private readonly parameterised = new Map<string, ParamRoute[]>();
  private readonly catchAll: EndpointDefinition | null;

  constructor(endpoints: readonly EndpointDefinition[]) {
    let catchAll: EndpointDefinition | null = null;
    endpoints.forEach((endpoint, order) => {
      if (endpoint.verb === 'all') {
        if (endpoint.path === CATCH_ALL_PATH && catchAll === null) catchAll = endpoint;
        return;
      }
      const parts = splitSegments(endpoint.path);
      // Literal segments are compared decoded, as the request's are: `/caf%C3%A9` is `/café`.
      const segments = parts.map((p) => (p.startsWith('{') ? null : decodeSegment(p)));
      if (segments.every((s) => s !== null)) {
        const key = `${endpoint.verb} ${canonicalPath(endpoint.path)}`;
        if (!this.literal.has(key)) this.literal.set(key, endpoint);
        return;
      }
      const names = parts.map((p) => (p.startsWith('{') ? p.slice(1, -1) : null));
      const list = this.parameterised.get(endpoint.verb) ?? [];
      list.push({ endpoint, segments, names, literalCount: segments.filter((s) => s !== null).length, order });
      this.parameterised.set(endpoint.verb, list);
    });
    for (const list of this.parameterised.values()) {
      list.sort((a, b) => b.literalCount - a.literalCount || a.order - b.order);
    }
    this.catchAll = catchAll;
  }

  match(method: string, rawPath: string): RouteMatch {
    const verb = method.toLowerCase();
    const path = normalizePath(rawPath);
    const found = this.find(verb, path) ?? (verb === 'head' ? this.find('get', path) : null);
    if (found !== null) return found;
    if (verb === 'options') {
      const allow = this.allowedVerbs(path);
      if (allow.length > 0) return { kind: 'options', allow };
    }
    if (this.catchAll !== null) return { kind: 'endpoint', endpoint: this.catchAll, pathParams: NO_PARAMS };
    return { kind: 'none' };
  }

  private find(verb: string, path: string): RouteMatch | null {
    const literal = this.literal.get(`${verb} ${canonicalPath(path)}`);
    if (literal !== undefined) return { kind: 'endpoint', endpoint: literal, pathParams: NO_PARAMS };
    const candidates = this.parameterised.get(verb);
    if (candidates === undefined) return null;
    const segments = splitSegments(path).map(decodeSegment);
    for (const route of candidates) {
      if (route.segments.length !== segments.length) continue;
      let ok = true;
      for (let i = 0; i < segments.length; i++) {
        const want = route.segments[i];
        if (want !== null && want !== segments[i]) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      // No prototype: a parameter may be named `__proto__` (a valid name), and must stay a key.
      const pathParams = Object.create(null) as Record<string, string>;
      route.names.forEach((name, i) => {
        if (name !== null) pathParams[name] = segments[i]!;
      });
      return { kind: 'endpoint', endpoint: route.endpoint, pathParams };
    }
    return null;
  }

  private allowedVerbs(path: string): string[] {
    const verbs = ['get', 'post', 'put', 'patch', 'delete', 'head'].filter((v) => this.find(v, path) !== null);
    if (verbs.length === 0) return [];
    if (verbs.includes('get') && !verbs.includes('head')) verbs.push('head');
    verbs.push('options');
    return verbs.map((v) => v.toUpperCase());
  }
}

/** Drops one trailing slash (the root stays `/`). */
export function normalizePath(path: string): string {
  if (path.length > 1 && path.endsWith('/')) return path.slice(0, -1);
  return path === '' ? '/' : path;
}

function splitSegments(path: string): string[] {
  return path === '/' ? [] : path.slice(1).split('/');
}

/**
 * The key of a literal path: each segment decoded, then `%` and `/` written encoded again, so a
 * `%2F` inside a segment never reads as a separator (`/a%2Fb` is one segment, `/a/b` two). A path
 * without `%` is its own key.
 */
function canonicalPath(path: string): string {
  if (!path.includes('%')) return path;
  return `/${splitSegments(path)
    .map((s) => decodeSegment(s).replaceAll('%', '%25').replaceAll('/', '%2F'))
    .join('/')}`;
}

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
