/**
 * Route keys of api.yaml's `endpoints`: "<verb> <path>" (SPEC §3). Parses, validates and
 * normalises them, and gives the "shape" two routes share when they would match the same requests.
 */
import { CATCH_ALL_PATH, VERBS, type Verb } from '../../shared/api-model/types.js';

export interface ParsedRoute {
  /** Lower-cased; `all` only with `/requests`. */
  verb: Verb | 'all';
  /** Normalised: leading `/`, one trailing `/` dropped (except for the root `/`). */
  path: string;
  /** Path parameter names, in path order. */
  params: string[];
  /** `<verb> <path>` with every `{name}` replaced by `{}`: equal shapes are duplicate routes. */
  shape: string;
}

export type RouteParse = { ok: true; route: ParsedRoute } | { ok: false; errors: string[] };

export type PathParse =
  { ok: true; path: string; segments: PathSegment[]; params: string[] } | { ok: false; errors: string[] };

export type PathSegment = { kind: 'literal'; text: string } | { kind: 'param'; name: string };

export const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** RFC 3986 `pchar`: unreserved / pct-encoded / sub-delims / ":" / "@". */
const PCHAR_SEGMENT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+$/;
const PCHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@%]/;

const EXPECTED_VERBS = `expected one of ${VERBS.join(', ')}, or all with ${CATCH_ALL_PATH}`;

/** Parses a route key as written in api.yaml, e.g. `GET /users/{id}/`. */
export function parseRouteKey(key: string): RouteParse {
  const parts = key.trim().split(/\s+/);
  if (parts.length !== 2 || parts[0] === '' || parts[1] === undefined) {
    return { ok: false, errors: [`route "${key}" must be "<verb> <path>", e.g. "get /users/{id}"`] };
  }
  const [rawVerb, rawPath] = parts as [string, string];
  const errors: string[] = [];

  const lower = rawVerb.toLowerCase();
  const verb = lower === 'all' || (VERBS as readonly string[]).includes(lower) ? (lower as Verb | 'all') : null;
  if (verb === null) errors.push(`bad verb "${rawVerb}" in route "${key}" (${EXPECTED_VERBS})`);

  const parsed = parseRoutePath(rawPath);
  if (!parsed.ok) errors.push(...parsed.errors);
  if (verb === 'all' && parsed.ok && parsed.path !== CATCH_ALL_PATH) {
    errors.push(`"all" is only allowed with the path ${CATCH_ALL_PATH} (the catch-all), not with "${rawPath}"`);
  }
  if (errors.length > 0 || verb === null || !parsed.ok) return { ok: false, errors };

  return {
    ok: true,
    route: { verb, path: parsed.path, params: parsed.params, shape: routeShape(verb, parsed.segments) },
  };
}

/** Validates and normalises a route path (`/a/{b}/`  →  `/a/{b}`). */
export function parseRoutePath(raw: string): PathParse {
  if (!raw.startsWith('/')) return { ok: false, errors: [`path "${raw}" must start with "/"`] };
  if (raw === '/') return { ok: true, path: '/', segments: [], params: [] };

  const trimmed = raw.endsWith('/') ? raw.slice(0, -1) : raw;
  const errors: string[] = [];
  const segments: PathSegment[] = [];
  const params: string[] = [];

  for (const text of trimmed.slice(1).split('/')) {
    if (text === '') {
      if (!errors.some((e) => e.startsWith('empty segment'))) errors.push(`empty segment ("//") in path "${raw}"`);
      continue;
    }
    if (text.startsWith('{') && text.endsWith('}')) {
      const name = text.slice(1, -1);
      if (!PARAM_NAME.test(name)) {
        errors.push(
          `bad path parameter name "${name}" in path "${raw}" (a letter or "_", then letters, digits or "_")`,
        );
      } else if (params.includes(name)) {
        errors.push(`path parameter "${name}" appears more than once in path "${raw}"`);
      } else {
        params.push(name);
        segments.push({ kind: 'param', name });
      }
      continue;
    }
    if (text.includes('{') || text.includes('}')) {
      errors.push(`bad segment "${text}" in path "${raw}" (a path parameter "{name}" must be a whole segment)`);
      continue;
    }
    if (text === '.' || text === '..') {
      errors.push(`segment "${text}" is not allowed in path "${raw}"`);
      continue;
    }
    if (!PCHAR_SEGMENT.test(text)) {
      const bad = [...text].find((c) => !PCHAR.test(c));
      const what = bad === undefined ? 'percent-encoding (% must be followed by two hex digits)' : `character "${bad}"`;
      errors.push(`bad ${what} in segment "${text}" of path "${raw}"`);
      continue;
    }
    segments.push({ kind: 'literal', text });
  }

  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, path: trimmed, segments, params };
}

/**
 * `get /u/{id}` and `get /u/{name}` both have the shape `get /u/{}`. Literal segments are compared
 * decoded, as the route table compares them: `get /%41` and `get /A` are the same route.
 */
export function routeShape(verb: Verb | 'all', segments: readonly PathSegment[]): string {
  const path = segments.map((s) => (s.kind === 'param' ? '{}' : oneSpelling(s.text))).join('/');
  return `${verb} /${path}`;
}

/** A literal segment decoded, then `%`, `/`, `{` and `}` encoded again: one spelling per segment. */
function oneSpelling(text: string): string {
  let decoded = text;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    // Not UTF-8 once decoded: the route table then compares the text as written, and so do we.
  }
  return decoded.replace(/[%/{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
