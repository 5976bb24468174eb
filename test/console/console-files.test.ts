import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { exchange } from '../helpers/raw-http.js';

// Issue 26: the console's static files on the admin host — no credentials (they hold no data),
// a strict Content-Security-Policy, nosniff, nothing outside the console's folder — and the
// overview's per-second requests behind its sparklines.

const CONSOLE_DIR = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'console');
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

let anvil: TestInstance;
beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      ping: { 'api.yaml': 'key: ping\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' },
      idle: { 'api.yaml': 'key: idle\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' },
    },
  });
});
afterAll(async () => anvil?.dispose());

const onAdmin = (path: string, options: { method?: string; headers?: Record<string, string> } = {}) =>
  anvil.request(path, { ...options, host: 'admin.localhost' });

describe('GET /anvil/console on the admin host', () => {
  it('serves the page without credentials, under a strict policy', async () => {
    const page = await onAdmin('/anvil/console/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(CSP);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.text).toContain('<script type="module" src="app.js"></script>');

    const moved = await onAdmin('/anvil/console');
    expect(moved.status).toBe(308);
    expect(moved.headers.location).toBe('/anvil/console/');
  });

  it('serves the ES modules, the CSS and the vendored uPlot with their types', async () => {
    const script = await onAdmin('/anvil/console/app.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.text).toBe(readFileSync(join(CONSOLE_DIR, 'app.js'), 'utf8'));
    expect((await onAdmin('/anvil/console/console.css')).headers['content-type']).toBe('text/css; charset=utf-8');
    const uplot = await onAdmin('/anvil/console/vendor/uPlot.esm.js');
    expect(uplot.status).toBe(200);
    expect(uplot.text).toContain('export { uPlot as default }');
    expect((await onAdmin('/anvil/console/vendor/uPlot.min.css')).status).toBe(200);
  });

  it('answers 304 to a request that has the file already', async () => {
    const first = await onAdmin('/anvil/console/app.js');
    const again = await onAdmin('/anvil/console/app.js', { headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('serves nothing outside its folder, nothing hidden, no other type, and only GET/HEAD', async () => {
    // Sent as they are (a URL parser would remove the dot segments before they left).
    for (const path of [
      '/anvil/console/../../package.json',
      '/anvil/console/vendor/../../package.json',
      '/anvil/console/%2e%2e/package.json',
      '/anvil/console/vendor/..%2f..%2fpackage.json',
      '/anvil/console/.hidden.js',
      '/anvil/console/vendor/VERSIONS.txt',
      '/anvil/console/nope.js',
      '/anvil/console/a/b/c.js',
    ]) {
      const refused = await exchange(
        anvil.port,
        `GET ${path} HTTP/1.1\r\nhost: admin.localhost\r\nconnection: close\r\n\r\n`,
      );
      expect(refused.status, path).toBe(404);
      expect(refused.raw, path).toContain(`content-security-policy: ${CSP}`);
    }
    const post = await onAdmin('/anvil/console/', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('is on the admin host only: a public host has no console', async () => {
    expect((await anvil.request('/anvil/console/')).status).toBe(404);
  });

  it('has no inline script or style, and builds pages from elements, not HTML strings', () => {
    const html = readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    for (const file of readdirSync(CONSOLE_DIR).filter((f) => f.endsWith('.js'))) {
      expect(readFileSync(join(CONSOLE_DIR, file), 'utf8'), file).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/,
      );
    }
  });
});

describe("the overview's recent requests (the console's sparklines)", () => {
  it('counts each of the last 60 whole seconds, null for an API without requests', async () => {
    for (let i = 0; i < 3; i++) expect((await anvil.request('/ping/ping')).status).toBe(200);
    const apis = await eventually(async () => {
      const answer = (await anvil.admin('/anvil/overview')).json();
      const ping = answer.apis.find((a: { key: string }) => a.key === 'ping');
      // The second of the requests is counted once it is over.
      return ping.recentRequests !== null && ping.recentRequests.reduce((n: number, c: number) => n + c, 0) === 3
        ? answer.apis
        : null;
    }, 5_000);
    const ping = apis.find((a: { key: string }) => a.key === 'ping');
    expect(ping.recentRequests).toHaveLength(60);
    expect(apis.find((a: { key: string }) => a.key === 'idle').recentRequests).toBeNull();
  });
});
