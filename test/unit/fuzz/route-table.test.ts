import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRouteKey } from '../../../src/deploy/api-yaml/route-path.js';
import type { EndpointDefinition } from '../../../src/shared/api-model/types.js';
import { RouteTable, type RouteMatch } from '../../../src/engine/route-table.js';
import { FUZZ_TEST_TIMEOUT_MS, fuzzParameters } from '../../helpers/fuzz-budget.js';

// The route table (SPEC §3 "Route matching") on random endpoint sets in random declaration order,
// against a model written from the spec: a path is split into segments, each percent-decoded (a
// route's literal segments too); a literal route beats any parameterised one, more literal segments
// win, declaration order breaks only a tie between parameterised routes, `all /requests` takes only
// what nothing else took. HEAD falls back to GET; OPTIONS lists the verbs.

const VERBS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;
/** Words of literal segments, decoded; each is written in api.yaml and in requests in random spellings. */
const WORDS = ['a', 'A', 'ab', 'caf\u00e9', 'a/b', '%', '__proto__', 'x.y', 'requests'];
const PARAMS = ['id', 'p', '__proto__', 'constructor'];
/** RFC 3986 pchar that needs no encoding (what a route may write as is). */
const PLAIN = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/;

/** `word` with each character written as is (where a route may) or percent-encoded, in either hex case. */
function spelling(word: string): fc.Arbitrary<string> {
  const chars = [...word].map((c) => {
    const encoded = [...Buffer.from(c)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    const options = [encoded, encoded.toUpperCase()];
    return fc.constantFrom(...(PLAIN.test(c) ? [c, c, ...options] : options));
  });
  return fc.tuple(...chars).map((parts) => parts.join(''));
}

const literal = fc.constantFrom(...WORDS).chain(spelling);
const segmentDef = fc.oneof(
  literal,
  fc.constantFrom(...PARAMS).map((p) => `{${p}}`),
);
const routeKey = fc
  .tuple(fc.constantFrom(...VERBS), fc.array(segmentDef, { maxLength: 3 }), fc.boolean())
  .map(([verb, segments, slash]) => `${verb} /${segments.join('/')}${slash && segments.length > 0 ? '/' : ''}`);

/** A route like `key`: its literal words spelt anew, a parameter maybe made a literal, or the reverse. */
function variant(key: string): fc.Arbitrary<string> {
  const [verb, path] = key.split(' ') as [string, string];
  const parts = segmentsOf(path).map((segment) =>
    segment.startsWith('{')
      ? fc.oneof(fc.constant(segment), literal)
      : fc.oneof(
          spelling(decode(segment)),
          fc.constantFrom(...PARAMS).map((p) => `{${p}}`),
        ),
  );
  return fc.tuple(...parts).map((segments) => `${verb} /${segments.join('/')}`);
}

/** Routes the deploy accepts (parseRouteKey), one per shape as the validator demands, maybe with the catch-all. */
const routeKeys = fc
  .array(routeKey, { minLength: 1, maxLength: 6 })
  .chain((keys) =>
    fc
      .tuple(fc.constant(keys), fc.array(fc.constantFrom(...keys).chain(variant), { maxLength: 6 }))
      .map(([a, b]) => [...a, ...b]),
  );
const endpoints = fc.tuple(routeKeys, fc.boolean()).map(([keys, catchAll]) => {
  const shapes = new Set<string>();
  const out: EndpointDefinition[] = [];
  for (const key of catchAll ? [...keys, 'all /requests'] : keys) {
    const parsed = parseRouteKey(key);
    if (!parsed.ok || shapes.has(parsed.route.shape)) continue;
    shapes.add(parsed.route.shape);
    out.push({
      verb: parsed.route.verb,
      path: parsed.route.path,
      entries: [],
      where: { file: 'api.yaml', line: out.length + 1, column: 1 },
    });
  }
  return out;
});

/** What a client (or an attacker) may put in a segment. */
const oddSegment = fc.oneof(
  fc.constantFrom('caf\u00e9', 'a/b', '%2e%2e', '..', '.', '', '%', '%zz', '%C3', '%00', '42', 'a%2F..', '\u{1F600}'),
  fc.string({ maxLength: 5 }),
);
const randomPath = fc
  .tuple(fc.array(fc.oneof(literal, oddSegment), { maxLength: 4 }), fc.boolean())
  .map(([segments, slash]) => `/${segments.join('/')}${slash ? '/' : ''}`);

/** A path one of the routes was written for: its literal words in any spelling, its parameters anything. */
function pathFor(list: readonly EndpointDefinition[]): fc.Arbitrary<string> {
  if (list.length === 0) return randomPath;
  return fc.constantFrom(...list).chain((endpoint) => {
    const parts = segmentsOf(endpoint.path).map((segment) =>
      segment.startsWith('{') ? fc.oneof(literal, oddSegment) : spelling(decode(segment)),
    );
    return fc
      .tuple(fc.tuple(...parts), fc.boolean())
      .map(([segments, slash]) => `/${segments.join('/')}${slash ? '/' : ''}`);
  });
}

/** Routes in declaration order, the same routes in another order, and a request path. */
const declared = endpoints.chain((list) =>
  fc.tuple(
    fc.constant(list),
    fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length }),
    fc.oneof(
      pathFor(list),
      randomPath,
      fc.string({ unit: 'binary', maxLength: 30 }).map((s) => `/${s}`),
    ),
  ),
);
const requestVerb = fc.constantFrom(
  'GET',
  'get',
  'HEAD',
  'OPTIONS',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'PROPFIND',
  '__proto__',
);

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function segmentsOf(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed === '/' || trimmed === '' ? [] : trimmed.slice(1).split('/');
}

interface Candidate {
  endpoint: EndpointDefinition;
  literals: number;
  params: Array<[string, string]>;
}

/** Every route of `verb` the path matches, with its literal count and parameters. */
function candidates(list: readonly EndpointDefinition[], verb: string, path: string): Candidate[] {
  const wanted = segmentsOf(path).map(decode);
  const out: Candidate[] = [];
  for (const endpoint of list) {
    if (endpoint.verb !== verb) continue;
    const route = segmentsOf(endpoint.path);
    if (route.length !== wanted.length) continue;
    const params: Array<[string, string]> = [];
    let literals = 0;
    const ok = route.every((segment, i) => {
      if (segment.startsWith('{')) return params.push([segment.slice(1, -1), wanted[i]!]) > 0;
      literals += 1;
      return decode(segment) === wanted[i];
    });
    if (ok) out.push({ endpoint, literals, params });
  }
  return out;
}

/** The most literal segments; among equals, the first declared. */
function best(list: readonly EndpointDefinition[], verb: string, path: string): Candidate | null {
  let chosen: Candidate | null = null;
  for (const c of candidates(list, verb, path)) if (chosen === null || c.literals > chosen.literals) chosen = c;
  return chosen;
}

type Outcome =
  | { kind: 'endpoint'; route: string; params: Array<[string, string]> }
  | { kind: 'options'; allow: string[] }
  | { kind: 'none' };

function model(list: readonly EndpointDefinition[], method: string, path: string): Outcome {
  const verb = method.toLowerCase();
  const found = best(list, verb, path) ?? (verb === 'head' ? best(list, 'get', path) : null);
  if (found !== null)
    return { kind: 'endpoint', route: `${found.endpoint.verb} ${found.endpoint.path}`, params: found.params.sort() };
  if (verb === 'options') {
    const verbs = ['get', 'post', 'put', 'patch', 'delete', 'head'].filter((v) => best(list, v, path) !== null);
    if (verbs.length > 0) {
      if (verbs.includes('get') && !verbs.includes('head')) verbs.push('head');
      return { kind: 'options', allow: [...verbs, 'options'].map((v) => v.toUpperCase()) };
    }
  }
  const catchAll = list.find((e) => e.verb === 'all');
  return catchAll === undefined ? { kind: 'none' } : { kind: 'endpoint', route: 'all /requests', params: [] };
}

function outcome(match: RouteMatch): Outcome {
  if (match.kind !== 'endpoint') return match;
  const params = Object.keys(match.pathParams).map((k): [string, string] => [k, match.pathParams[k]!]);
  return { kind: 'endpoint', route: `${match.endpoint.verb} ${match.endpoint.path}`, params: params.sort() };
}

describe('the route table on random routes in random order', () => {
  it(
    'matches as the spec says, whatever the declaration order (order breaks only ties between parameterised routes)',
    () => {
      fc.assert(
        fc.property(declared, requestVerb, ([list, shuffled, path], verb) => {
          const want = model(list, verb, path);
          expect(outcome(new RouteTable(list).match(verb, path)), `${verb} ${path}`).toEqual(want);
          const reordered = outcome(new RouteTable(shuffled).match(verb, path));
          expect(reordered, `${verb} ${path} (reordered)`).toEqual(model(shuffled, verb, path));
          // The same route in both orders, unless two parameterised routes tie on literal segments
          // (two literal routes never may: they would be the same route).
          const lower = verb.toLowerCase();
          const used = lower === 'head' && best(list, lower, path) === null ? 'get' : lower;
          const top = best(list, used, path);
          const tied = candidates(list, used, path).filter((c) => c.literals === top?.literals && c.params.length > 0);
          if (tied.length <= 1) expect(reordered, `${verb} ${path}: declaration order changed the route`).toEqual(want);
        }),
        fuzzParameters(5000),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );

  it(
    'a route declared for the request beats the catch-all, wherever the catch-all is declared',
    () => {
      fc.assert(
        fc.property(declared, requestVerb, ([list, , path], verb) => {
          const withCatchAll = [
            ...list.filter((e) => e.verb !== 'all'),
            { verb: 'all' as const, path: '/requests', entries: [], where: { file: 'api.yaml', line: 0, column: 1 } },
          ];
          for (const order of [withCatchAll, [withCatchAll.at(-1)!, ...withCatchAll.slice(0, -1)]]) {
            const got = new RouteTable(order).match(verb, path);
            const specific =
              best(order, verb.toLowerCase(), path) ??
              (verb.toLowerCase() === 'head' ? best(order, 'get', path) : null);
            if (specific !== null)
              expect(got.kind === 'endpoint' && got.endpoint.verb !== 'all', `${verb} ${path}`).toBe(true);
            else if (got.kind === 'endpoint')
              expect(got.endpoint.verb === 'all' || verb.toLowerCase() === 'options').toBe(true);
          }
        }),
        fuzzParameters(3000),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );

  it(
    'never throws on any verb and path',
    () => {
      fc.assert(
        fc.property(
          declared,
          fc.string({ maxLength: 12 }),
          fc.string({ unit: 'binary', maxLength: 60 }),
          ([list], verb, path) => {
            const got = new RouteTable(list).match(verb, path);
            expect(['endpoint', 'options', 'none']).toContain(got.kind);
          },
        ),
        fuzzParameters(3000),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
