import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { apiLog, waitFor } from '../helpers/wait-for.js';

// Every example of SPEC §§2–8, as an API folder of test/fixtures/spec-examples/ (api.yaml exactly as
// SPEC writes it; what SPEC references without showing — a map, a table — is added beside it), run
// over HTTP against a real instance.

const EXAMPLES = join(import.meta.dirname, '../fixtures/spec-examples');
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const KEY = { 'api-key': 'spec-example-key' };

let anvil: InProcessApis;

beforeAll(async () => {
  const folders = readdirSync(EXAMPLES, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  anvil = await startInProcess({ apis: Object.fromEntries(folders.map((name) => [name, join(EXAMPLES, name)])) });
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
    for (const [method, path] of [
      ['GET', '/users/nothing'],
      ['POST', '/users/a/b/c'],
      ['DELETE', '/users/user/1'],
    ]) {
      const reply = await anvil.request(path!, { method, headers: KEY });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.json()).toEqual({ error: 'Page not found' });
    }
  });

  it('writes a Log line per request in AFTER_FLOW', async () => {
    const reply = await anvil.request('/users/user/2', { headers: KEY });
    const id = reply.headers['x-correlation-id'];
    const line = await waitFor(() => apiLog(anvil, 'users').find((l) => l.id === id), {
      what: 'the Log line of GET /users/user/2',
    });
    expect(line).toMatchObject({ verb: 'GET', path: '/user/2', status: 200 });
  });
});

describe("SPEC's 404 page: SetSmartError before ThrowError in the catch-all, OnError in after", () => {
  it('answers the HTML page to a browser', async () => {
    const reply = await anvil.request('/pages/no/such/page', { headers: { accept: BROWSER } });
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.headers['vary']).toBe('accept');
    expect(reply.text).toBe(
      '<!doctype html><html><body><h1>404: nothing here</h1><p>Page not found</p></body></html>\n',
    );
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

describe('SPEC §2 folder layout', () => {
  it('merges Maps/<env>/<name>.json over Maps/<name>.json (objects merge, arrays and scalars replace), and reads any Maps/<name>.json', async () => {
    const reply = await anvil.request('/layout/maps');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({
      main: { greeting: { word: 'Hi', punct: '!' }, tags: ['dev'], limit: 5 },
      schema: 'object',
    });
  });

  it('runs custom directives from Directives/<Name>.js and Directives/<Name>.ts', async () => {
    const reply = await anvil.request('/layout/greet/Ann');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({ text: 'HI, ANN!' });
  });

  it('renders Assets/views with a fragment from Assets/views/fragments and the css/js URLs', async () => {
    const reply = await anvil.request('/layout/page');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.text).toBe(
      '<title>Layout</title><link rel="stylesheet" href="/layout/static/css/site.css"><script src="/layout/static/js/app.js"></script>\n<nav>Layout &amp; more</nav>\n\n',
    );
  });

  it('serves Assets/css, Assets/js and Assets/images', async () => {
    const css = await anvil.request('/layout/static/css/site.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.text).toBe('body { color: #333; }\n');
    const js = await anvil.request('/layout/static/js/app.js');
    expect(js.text).toBe('console.log("layout");\n');
    const png = await anvil.request('/layout/static/images/dot.png');
    expect(png.status).toBe(200);
    expect(png.headers['content-type']).toBe('image/png');
  });

  it('applies Assets/db/*.sql in file-name order, each once', async () => {
    for (let i = 0; i < 2; i++) {
      const reply = await anvil.request('/layout/items');
      expect(reply.status, reply.text).toBe(200);
      expect(reply.json()).toEqual([{ name: 'first' }, { name: 'second' }]);
    }
  });
});

describe('SPEC §5 aliases', () => {
  it('resolves every form of the table, inside maps and lists, a missing key as null', async () => {
    const reply = await anvil.request('/aliases/echo/42?q=search', {
      method: 'POST',
      headers: { 'x-test': 'header value', 'content-type': 'application/json' },
      body: '{"a":{"b":"field"}}',
    });
    expect(reply.status, reply.text).toBe(200);
    const body = reply.json();
    const id = reply.headers['x-correlation-id'];
    expect(body).toEqual({
      pathParam: '42',
      pathParams: '42',
      header: 'header value',
      query: 'search',
      queryParam: 'search',
      bodyRaw: '{"a":{"b":"field"}}',
      bodyField: 'field',
      verb: 'POST',
      path: '/echo/42',
      status: 200,
      map: { x: { y: 'from the map' } },
      mapField: 'from the map',
      memory: 'deep',
      id,
      missing: null,
      list: ['search', { nested: '42' }],
      system: {
        api: 'aliases',
        env: 'dev',
        host: 'localhost',
        release: expect.stringMatching(/^r-/),
        localhost: anvil.localBaseUrl,
        definitionVerb: 'post',
        definitionPath: '/echo/{id}',
        ip: '127.0.0.1',
        correlationId: id,
      },
    });
  });
});

describe('SPEC §7 Groups: a custom group enabled when $.message.body.save is true', () => {
  it('runs the SAVE entries only when asked', async () => {
    const post = (body: object) =>
      anvil.request('/notes/notes', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const saved = await post({ save: true, text: 'kept' });
    expect(saved.status, saved.text).toBe(201);
    expect(saved.json()).toEqual({ saved: true });
    const notSaved = await post({ save: false, text: 'dropped' });
    expect(notSaved.status).toBe(200);
    expect(notSaved.json()).toEqual({ saved: false });
    expect((await post({ text: 'no flag' })).json()).toEqual({ saved: false });
    expect((await anvil.request('/notes/notes')).json()).toEqual([{ text: 'kept' }]);
  });
});

describe('SPEC §7 custom directives composing built-ins with run()', () => {
  it('a custom Push built from ModifyMessage + Http', async () => {
    const reply = await anvil.request('/compose/forward', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"item":"parcel"}',
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json()).toEqual({ received: 'parcel', verb: 'POST' });
  });

  it("an async function awaiting run('Pull', …)", async () => {
    const reply = await anvil.request('/compose/pulled');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual([{ n: 1 }, { n: 2 }]);
  });
});
