import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ROUTE_KEY_PATTERN } from '../../../src/deploy/api-yaml/route-key-pattern.js';
import { parseRouteKey } from '../../../src/deploy/api-yaml/route-path.js';
import { FUZZ_TEST_TIMEOUT_MS, fuzzParameters } from '../../helpers/fuzz-budget.js';

// ajv compiles schema patterns with the `u` flag; so does this test.
const pattern = new RegExp(ROUTE_KEY_PATTERN, 'u');
/** parseRouteKey refuses a repeated path parameter; the pattern cannot see it (the schema's documented gap). */
function repeatsParam(key: string): boolean {
  const parsed = parseRouteKey(key);
  return !parsed.ok && parsed.errors.some((e) => e.includes('appears more than once'));
}

describe('the JSON Schema pattern of route keys', () => {
  it('agrees with parseRouteKey on written examples', () => {
    const accepted = [
      'get /',
      'GET /users/{id}/',
      '  post   /a/b  ',
      'all /requests',
      'ALL /requests/',
      'get /%41/~x',
      'options /a/.../b',
      'delete /a:b@c',
    ];
    const refused = [
      'fetch /x',
      'get users',
      'get /users//{id}',
      'get /users/{1st}',
      'all /users',
      'get /a/./b',
      'get /a/..',
      'get /a{b}',
      'get /%4',
      'get /é',
      'get',
      'get / x',
      'all /%72equests',
    ];
    for (const key of accepted) {
      expect(parseRouteKey(key).ok, key).toBe(true);
      expect(pattern.test(key), key).toBe(true);
    }
    for (const key of refused) {
      expect(parseRouteKey(key).ok, key).toBe(false);
      expect(pattern.test(key), key).toBe(false);
    }
  });

  it(
    'agrees with parseRouteKey on generated keys (but for repeated path parameters)',
    () => {
      const piece = fc.constantFrom(
        'get',
        'GeT',
        'all',
        'fetch',
        ' ',
        '\t',
        '/',
        '//',
        '{id}',
        '{1d}',
        '{',
        '}',
        'a',
        '.',
        '..',
        '%41',
        '%4',
        'requests',
        '/requests',
        'é',
        '~',
        ':',
        '?',
        '#',
      );
      fc.assert(
        fc.property(
          fc.array(piece, { maxLength: 8 }).map((parts) => parts.join('')),
          (key) => {
            if (repeatsParam(key)) return;
            expect(pattern.test(key), JSON.stringify(key)).toBe(parseRouteKey(key).ok);
          },
        ),
        fuzzParameters(2000),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
