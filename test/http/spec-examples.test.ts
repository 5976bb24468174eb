import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { apiLog, waitFor } from '../helpers/wait-for.js';

// Every example of SPEC §§2–8, as an API folder of test/fixtures/spec-examples/ (api.yaml exactly as
// SPEC writes it; what SPEC references without showing — a map, a table — is added beside it), run
// over HTTP against a real instance.

const EXAMPLES = join(import.meta.dirname, '../fixtures/spec-examples');
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const KEY = { 'api-key': 'spec-example-key' };

let anvil: TestInstance;

beforeAll(async () => {
  const folders = readdirSync(EXAMPLES, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  anvil = await startInstance({ apis: Object.fromEntries(folders.map((name) => [name, join(EXAMPLES, name)])) });
});
afterAll(async () => anvil?.dispose());

describe('SPEC §3 api.yaml (users), with SPEC §7 ReadUser.js', () => {
  it('reads a user from the API database through the custom directive', async () => {
    const reply = await anvil.request('/users/user/1', { headers: KEY });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.json()).toEqual({ id: 1, name: 'Ada Lovelace' });
  });

  it('refuses a missing or wrong api-key with 401 through CheckKey in before, rendered by OnError', async () => {
    for (const headers of [{}, { 'api-key': 'wrong' }] as Array<Record<string, string>>) {
      const reply = await anvil.request('/users/user/1', { headers });
      expect(reply.status).toBe(401);
      expect(reply.json()).toEqual({ error: 'Unauthorized' });
    }
  });

  it("answers ReadUser's state.fail(404) and the catch-all's ThrowError as JSON errors", async () => {
    const missing = await anvil.request('/users/user/99', { headers: KEY });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: 'user not found' });
    for (const [method, path] of [['GET', '/users/nothing'], ['POST', '/users/a/b/c'], ['DELETE', '/users/user/1']]) {
      const reply = await anvil.request(path!, { method, headers: KEY });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.json()).toEqual({ error: 'Page not found' });
    }
  });

  it('writes a Log line per request in AFTER_FLOW', async () => {
    const reply = await anvil.request('/users/user/2', { headers: KEY });
    const id = reply.headers['x-correlation-id'];
    const line = await waitFor(() => apiLog(anvil, 'users').find((l) => l.id === id), { what: 'the Log line of GET /users/user/2' });
    expect(line).toMatchObject({ verb: 'GET', path: '/user/2', status: 200 });
  });
});

describe("SPEC's 404 page: SetSmartError before ThrowError in the catch-all, OnError in after", () => {
  it('answers the HTML page to a browser', async () => {
    const reply = await anvil.request('/pages/no/such/page', { headers: { accept: BROWSER } });
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.headers['vary']).toBe('accept');
    expect(reply.text).toBe('<!doctype html><html><body><h1>404: nothing here</h1><p>Page not found</p></body></html>\n');
  });

  it('answers JSON to a client that accepts application/json, and to one that says nothing', async () => {
    for (const headers of [{ accept: 'application/json' }, {}] as Array<Record<string, string>>) {
      const reply = await anvil.request('/pages/no/such/page', { method: 'POST', headers });
      expect(reply.status).toBe(404);
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(reply.json()).toEqual({ error: 'Page not found' });
    }
  });

  it('leaves the other endpoints alone', async () => {
    const reply = await anvil.request('/pages/hello', { headers: { accept: BROWSER } });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ hello: 'world' });
  });
});
