import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

const fixtures = join(import.meta.dirname, '../fixtures/apis');
let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({ apis: { routes: join(fixtures, 'routes'), nocatch: join(fixtures, 'nocatch') } });
});
afterAll(async () => anvil?.dispose());

async function routeOf(path: string, method = 'GET'): Promise<string> {
  const reply = await anvil.request(path, { method });
  expect(reply.status).toBe(200);
  return reply.json().route;
}

describe('route matching of SPEC §3', () => {
  it('prefers a literal route over a parameterised one, whatever the declaration order', async () => {
    expect(await routeOf('/routes/items/special')).toBe('literal');
    const param = await anvil.request('/routes/items/42');
    expect(param.json()).toMatchObject({
      route: 'param',
      params: { id: '42' },
      definition: '/items/{id}',
      verb: 'get',
    });
  });

  it('prefers more literal segments, then declaration order', async () => {
    expect(await routeOf('/routes/a/b/c')).toBe('a-x-c'); // two literals each: declared first wins
    expect(await routeOf('/routes/z/b/c')).toBe('y-b-c'); // two literals beat one
    expect(await routeOf('/routes/z/b/q')).toBe('y-b-z');
    expect(await routeOf('/routes/items/9/detail')).toBe('param-detail');
  });

  it('ignores one trailing slash and the query string', async () => {
    expect(await routeOf('/routes/items/special/')).toBe('literal');
    expect(await routeOf('/routes/items/42/?x=/items/special')).toBe('param');
    expect(await routeOf('/routes')).toBe('root');
    expect(await routeOf('/routes/')).toBe('root');
  });

  it('decodes path parameters', async () => {
    const reply = await anvil.request('/routes/items/caf%C3%A9%20au%20lait');
    expect(reply.json().params.id).toBe('café au lait');
  });

  it('sends everything else to the catch-all, any verb and any depth', async () => {
    expect(await routeOf('/routes/nothing/here/at/all')).toBe('catch-all');
    expect(await routeOf('/routes/items/special', 'DELETE')).toBe('catch-all');
    expect(await routeOf('/routes/items/special', 'PATCH')).toBe('catch-all');
    expect(await routeOf('/routes/items/1', 'POST')).toBe('post-param');
    const reply = await anvil.request('/routes/deep/er');
    expect(reply.json()).toMatchObject({ definition: '/requests', verb: 'all' });
  });

  it('answers 404 {"error":"Not Found"} when nothing matches and there is no catch-all', async () => {
    const reply = await anvil.request('/nocatch/elsewhere');
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({ error: 'Not Found' });
    expect((await anvil.request('/nocatch/here')).json()).toEqual({ message: 'pong' });
  });

  it('serves HEAD from the get endpoint without a body, unless a head endpoint exists', async () => {
    const head = await anvil.request('/routes/items/special', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['x-route']).toBe('literal');
    const own = await anvil.request('/routes/only-head', { method: 'HEAD' });
    expect(own.headers['x-route']).toBe('head');
  });

  it('answers OPTIONS with 204 and the verbs of the path', async () => {
    const reply = await anvil.request('/routes/items/7', { method: 'OPTIONS' });
    expect(reply.status).toBe(204);
    expect(reply.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
    const none = await anvil.request('/nocatch/elsewhere', { method: 'OPTIONS' });
    expect(none.status).toBe(404);
  });
});
