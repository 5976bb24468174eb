import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

const fixtures = join(import.meta.dirname, '../fixtures/apis');
let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({ apis: { custom: join(fixtures, 'custom') } });
});
afterAll(async () => anvil?.dispose());

describe('custom directives (SPEC §7)', () => {
  it('see the state facade: memory, message, map, groups, id, config with aliases resolved', async () => {
    const reply = await anvil.request('/custom/echo/7?q=1&q=2', {
      method: 'POST',
      body: JSON.stringify({ hello: 'world' }),
      headers: { 'content-type': 'application/json', 'x-custom': 'custom value' },
    });
    expect(reply.status).toBe(201);
    expect(reply.headers['x-echo']).toBe('yes');
    expect(reply.json()).toEqual({
      id: reply.headers['x-correlation-id'],
      config: { greeting: 'hello from the map', id: '7' },
      verb: 'POST',
      path: '/echo/7',
      query: { q: ['1', '2'] },
      pathParams: { id: '7' },
      header: 'custom value',
      body: { hello: 'world' },
      memory: { by: 'EchoState' },
      system: 'custom',
      map: { greeting: 'hello from the map' },
      noMap: null,
      normal: true,
    });
  });

  it('compose built-ins with an awaited run (TypeScript transpiled at deploy time)', async () => {
    const reply = await anvil.request('/custom/compose');
    expect(reply.status).toBe(202);
    expect(reply.json()).toEqual({ text: 'by run!' });
  });

  it('fail(404, …) switches to ERROR_FLOW, where OnError renders it', async () => {
    const reply = await anvil.request('/custom/missing/abc');
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({ error: 'thing abc not found' });
    expect((await anvil.request('/custom/missing/known')).json()).toEqual({ found: 'known' });
  });

  it('may be async, and have no timers', async () => {
    const reply = await anvil.request('/custom/async');
    expect(reply.json()).toEqual({ waited: 30, api: 'custom', timers: 'undefined' });
  });

  it('run typed TypeScript', async () => {
    expect((await anvil.request('/custom/typed')).json()).toEqual({ fib: 6765 });
  });

  it('edit groups case-insensitively', async () => {
    expect((await anvil.request('/custom/groups')).json()).toEqual({ hidden: null, shown: 'ran' });
  });
});
