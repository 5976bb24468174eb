import { describe, expect, it } from 'vitest';
import { parseRouteKey, parseRoutePath } from '../../src/deploy/api-yaml/route-path.js';

describe('parseRouteKey', () => {
  it('normalises the verb and one trailing slash, and gives the shape', () => {
    expect(parseRouteKey('GET /u/{id}/')).toEqual({
      ok: true,
      route: { verb: 'get', path: '/u/{id}', params: ['id'], shape: 'get /u/{}' },
    });
    expect(parseRouteKey('get /')).toMatchObject({ ok: true, route: { path: '/', shape: 'get /' } });
    expect(parseRouteKey('All /requests/')).toMatchObject({ ok: true, route: { verb: 'all', path: '/requests' } });
  });

  it('gives duplicate routes the same shape', () => {
    const shape = (key: string) => {
      const r = parseRouteKey(key);
      return r.ok ? r.route.shape : null;
    };
    expect(shape('get /u/{id}')).toBe(shape('get /u/{name}/'));
    expect(shape('GET /a')).toBe(shape('get /a'));
    expect(shape('get /a')).not.toBe(shape('post /a'));
    expect(shape('get /u/me')).not.toBe(shape('get /u/{id}'));
    // Literal segments are compared decoded, as requests are matched.
    expect(shape('get /%41/caf%C3%A9')).toBe(shape('get /A/caf%c3%a9'));
    expect(shape('get /a%2Fb')).not.toBe(shape('get /a/b'));
    expect(shape('get /%7Bid%7D')).not.toBe(shape('get /{id}'));
  });

  it.each([
    ['fetch /x', 'bad verb "fetch"'],
    ['get', 'must be "<verb> <path>"'],
    ['get /a /b', 'must be "<verb> <path>"'],
    ['all /x', '"all" is only allowed with the path /requests'],
    ['get x', 'must start with "/"'],
    ['get /a//b', 'empty segment'],
    ['get //', 'empty segment'],
    ['get /u/{1x}', 'bad path parameter name "1x"'],
    ['get /u/{}', 'bad path parameter name ""'],
    ['get /u/{id}/{id}', 'path parameter "id" appears more than once'],
    ['get /u-{id}', 'must be a whole segment'],
    ['get /a?b=1', 'bad character "?"'],
    ['get /a#b', 'bad character "#"'],
    ['get /a%zz', 'bad percent-encoding'],
    ['get /a/../b', 'segment ".." is not allowed'],
  ])('%s is refused', (key, fragment) => {
    const result = parseRouteKey(key);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.join('\n')).toContain(fragment);
  });

  it('accepts RFC 3986 path characters in literal segments', () => {
    expect(parseRoutePath("/a-b_c.d~e/!$&'()*+,;=:@/%2F")).toMatchObject({ ok: true });
  });
});
