import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { eventually } from '../helpers/instance.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

// Smart + Http + CacheStatic as a reverse proxy in front of a real local upstream (SPEC §7).
// Loopback is refused by default (SSRF), so the instance allows 127.0.0.1 explicitly. In-process
// (helpers/in-process-apis.ts): the hop-by-hop headers a client sends reach the engine as they are.

let upstream: Upstream;
let anvil: InProcessApis;

beforeAll(async () => {
  upstream = await startUpstream();
  anvil = await startInProcess({
    env: { ANVIL_EGRESS_ALLOW: '127.0.0.1' },
    apis: {
      proxy: {
        'api.yaml': `key: proxy
endpoints:
  all /requests:
    Smart: { directive: Smart }
    Forward: { directive: Http, host: "http://127.0.0.1:${upstream.port}", timeout: 1 }
    Cache: { directive: CacheStatic }
`,
      },
    },
  });
});
afterAll(async () => {
  await anvil?.dispose();
  await upstream?.close();
});

describe('Http behind Smart: a reverse proxy', () => {
  it('passes verb, path, query, body and end-to-end headers upstream, drops hop-by-hop ones, adds x-forwarded-*', async () => {
    const body = JSON.stringify({ hello: 'world' });
    const reply = await anvil.request('/proxy/some/deep/path?a=1&b=two&b=three', {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'x-custom': 'kept',
        connection: 'x-secret',
        'x-secret': '1',
        te: 'trailers',
        upgrade: 'websocket',
        'keep-alive': 'timeout=5',
        'proxy-authorization': 'Basic Zm9vOmJhcg==',
      },
    });
    expect(reply.status, reply.text).toBe(200);
    const seen = JSON.parse(reply.text);
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/some/deep/path');
    expect(seen.rawQuery).toBe('a=1&b=two&b=three');
    expect(seen.body).toBe(body);
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['x-custom']).toBe('kept');
    // Hop-by-hop: the connection header itself, what it names, and the fixed list.
    expect(seen.headers['x-secret']).toBeUndefined();
    expect(seen.headers.te).toBeUndefined();
    expect(seen.headers.upgrade).toBeUndefined();
    expect(seen.headers['keep-alive']).toBeUndefined();
    expect(seen.headers['proxy-authorization']).toBeUndefined();
    expect(String(seen.headers.connection ?? '')).not.toContain('x-secret');
    // Added by Smart.
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-forwarded-host']).toBe('localhost');
    // The upstream's Host is the upstream, not the client's.
    expect(seen.headers.host).toBe(`127.0.0.1:${upstream.port}`);
  });

  it('appends the client to an incoming x-forwarded-for', async () => {
    const reply = await anvil.request('/proxy/echo', { headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(reply.json().headers['x-forwarded-for']).toBe('203.0.113.7, 127.0.0.1');
  });

  it('sets x-forwarded-proto and -host to what it saw, whatever the client claims', async () => {
    const reply = await anvil.request('/proxy/echo', {
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'bank.example' },
    });
    expect(reply.json().headers['x-forwarded-proto']).toBe('http');
    expect(reply.json().headers['x-forwarded-host']).toBe('localhost');
  });

  it("returns the upstream's status, headers and body, without its hop-by-hop headers", async () => {
    const reply = await anvil.request('/proxy/status/418');
    expect(reply.status).toBe(418);
    expect(reply.headers['x-upstream']).toBe('yes');
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.headers['x-up-secret']).toBeUndefined();
    expect(reply.json()).toEqual({ status: 418 });
    // Nothing of the request is echoed back in the response headers.
    expect(reply.headers['x-forwarded-for']).toBeUndefined();
  });

  it('answers a second identical GET of a static file from the cache', async () => {
    const first = await anvil.request('/proxy/static.css');
    expect(first.status).toBe(200);
    expect(first.text).toBe('body { color: red; }');
    expect(first.headers['content-type']).toBe('text/css');
    expect(first.headers['cache-control']).toBe('public, max-age=300');
    expect(Date.parse(String(first.headers.expires))).toBeGreaterThan(Date.now() + 200_000);
    expect(first.headers['x-anvil-cache']).toBeUndefined();
    expect(upstream.hits('/static.css')).toBe(1);

    const second = await anvil.request('/proxy/static.css');
    expect(second.status).toBe(200);
    expect(second.text).toBe('body { color: red; }');
    expect(second.headers['x-anvil-cache']).toBe('hit');
    expect(second.headers['cache-control']).toBe('public, max-age=300');
    expect(second.headers['content-type']).toBe('text/css');
    expect(upstream.hits('/static.css')).toBe(1);

    // A different query is another resource: it goes upstream.
    const other = await anvil.request('/proxy/static.css?v=2');
    expect(other.headers['x-anvil-cache']).toBeUndefined();
    expect(upstream.hits('/static.css')).toBe(2);
    // Not static: JSON is never cached.
    await anvil.request('/proxy/status/200');
    expect((await anvil.request('/proxy/status/200')).headers['x-anvil-cache']).toBeUndefined();
  });

  it('does not follow a redirect: the client gets the 302 and its location', async () => {
    const reply = await anvil.request('/proxy/redirect');
    expect(reply.status).toBe(302);
    expect(reply.headers.location).toBe('http://169.254.169.254/latest/meta-data');

    const local = await anvil.request('/proxy/redirect-local');
    expect(local.status).toBe(302);
    expect(local.headers.location).toBe(`http://127.0.0.1:${upstream.port}/landing`);
    expect(upstream.hits('/landing')).toBe(0);
  });

  it('answers 504 when the upstream is slower than the timeout', async () => {
    const started = Date.now();
    const reply = await anvil.request('/proxy/slow');
    expect(reply.status).toBe(504);
    expect(reply.json()).toEqual({ error: 'Gateway Timeout' });
    expect(Date.now() - started).toBeLessThan(1_900);
    // The real reason is in the log (which reaches the router's stdout a moment later).
    await eventually(() => /did not answer within 1000 ms/.test(anvil.output()), 5_000);
  });
});
