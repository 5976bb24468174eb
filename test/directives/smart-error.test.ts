import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

const fixtures = join(import.meta.dirname, '../fixtures/apis');
let anvil: InProcessApis;

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

beforeAll(async () => {
  anvil = await startInProcess({
    apis: { 'smart-error': join(fixtures, 'smart-error'), 'smart-error-plain': join(fixtures, 'smart-error-plain') },
  });
});
afterAll(async () => anvil?.dispose());

function get(path: string, accept?: string) {
  return anvil.request(path, accept === undefined ? {} : { headers: { accept } });
}

describe('SetSmartError (SPEC §7)', () => {
  it('renders Assets/views/errors/<status>.liquid for a browser, with status and message escaped', async () => {
    const reply = await get('/smart-error/missing-thing', BROWSER);
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.headers['vary']).toBe('accept');
    expect(reply.headers['x-correlation-id']).toBeTruthy();
    expect(reply.text).toBe(
      '<!doctype html><html><body class="custom-404"><h1>Custom 404</h1><p>thing &lt;b&gt;42&lt;/b&gt; not found</p></body></html>\n',
    );
  });

  it('answers JSON like OnError to every other client', async () => {
    for (const accept of [
      undefined,
      '*/*',
      'application/json',
      'text/html;q=0.5, application/json',
      'text/html, application/json',
      'text/plain',
    ]) {
      const reply = await get('/smart-error/missing-thing', accept);
      expect(reply.status, String(accept)).toBe(404);
      expect(reply.headers['content-type'], String(accept)).toBe('application/json; charset=utf-8');
      expect(reply.headers['vary']).toBe('accept');
      expect(reply.json()).toEqual({ error: 'thing <b>42</b> not found' });
    }
  });

  it('weighs accept by quality and specificity', async () => {
    for (const accept of [
      'text/html',
      'application/json;q=0.5, text/html',
      'text/*',
      'application/xhtml+xml',
      'text/html;q=0.9, */*;q=0.1',
    ]) {
      const reply = await get('/smart-error/missing-thing', accept);
      expect(reply.headers['content-type'], accept).toBe('text/html; charset=utf-8');
    }
    expect((await get('/smart-error/missing-thing', 'text/html;q=0')).headers['content-type']).toContain(
      'application/json',
    );
  });

  it('falls back to an escaped built-in page when there is no template for the status', async () => {
    const reply = await get('/smart-error/teapot', BROWSER);
    expect(reply.status).toBe(418);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.text).toContain('<title>418 I&#39;m a Teapot</title>');
    expect(reply.text).toContain('<p>short &amp; &lt;stout&gt;</p>');
    expect(reply.text).not.toContain('<stout>');
  });

  it('hides the message of a status >= 500 (debug off), in HTML and in JSON', async () => {
    const html = await get('/smart-error/boom', BROWSER);
    expect(html.status).toBe(500);
    expect(html.text).toContain('<h1>500 Internal Server Error</h1>');
    expect(html.text).toContain('<p>Internal Server Error</p>');
    expect(html.text).not.toContain('secret');
    const json = await get('/smart-error/boom', 'application/json');
    expect(json.status).toBe(500);
    expect(json.json()).toEqual({ error: 'Internal Server Error' });
  });

  it('falls back to the built-in page when the tenant template fails (render limit)', async () => {
    const reply = await get('/smart-error/forbidden', BROWSER);
    expect(reply.status).toBe(403);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.text).toContain('<h1>403 Forbidden</h1>');
    expect(reply.text).toContain('<p>go away</p>');
  });

  it("uses the client's accept recorded in NORMAL_FLOW even after the headers were replaced", async () => {
    const html = await get('/smart-error/replaced', BROWSER);
    expect(html.status).toBe(404);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.text).toContain('<h1>Custom 404</h1><p>replaced headers</p>');
    const json = await get('/smart-error/replaced', 'application/json');
    expect(json.headers['content-type']).toContain('application/json');
  });

  it('handles the catch-all 404 and leaves successful responses alone', async () => {
    const page = await get('/smart-error/no/such/page', BROWSER);
    expect(page.status).toBe(404);
    expect(page.text).toContain('<h1>Custom 404</h1><p>no such page</p>');
    const ok = await get('/smart-error/ok', BROWSER);
    expect(ok.status).toBe(200);
    expect(ok.json()).toEqual({ message: 'pong' });
    expect(ok.headers['vary']).toBeUndefined();
  });

  it('without a record, reads the request accept, but never one a directive set', async () => {
    const html = await get('/smart-error-plain/missing-thing', BROWSER);
    expect(html.status).toBe(404);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.text).toContain('<h1>404 Not Found</h1>');
    expect(html.text).toContain('<p>thing not found</p>');
    // ModifyMessage replaced every header (with an accept of its own): the client's is unknown, so JSON.
    for (const accept of [BROWSER, 'application/json']) {
      const replaced = await get('/smart-error-plain/replaced', accept);
      expect(replaced.status).toBe(409);
      expect(replaced.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(replaced.json()).toEqual({ error: 'replaced headers' });
    }
    const hidden = await get('/smart-error-plain/debug-off', BROWSER);
    expect(hidden.status).toBe(503);
    expect(hidden.text).toContain('<h1>503 Service Unavailable</h1>');
    expect(hidden.text).not.toContain('internal detail');
  });
});
