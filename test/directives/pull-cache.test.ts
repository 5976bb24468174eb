import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/instance.js';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

// Pull against a real counting upstream (SPEC §7): `cache` seconds of reuse per identical call,
// `verify` turning an upstream error into 502 (or letting it into memory), `timeout` → 504.

let upstream: Upstream;
let anvil: InProcessApis;

beforeAll(async () => {
  upstream = await startUpstream();
  const host = `http://127.0.0.1:${upstream.port}`;
  anvil = await startInProcess({
    env: { ANVIL_EGRESS_ALLOW: '127.0.0.1' },
    apis: {
      pulls: {
        'api.yaml': `key: pulls
endpoints:
  get /cached:
    Get: { directive: Pull, host: "${host}", path: /count, queryParams: { q: $.message.query.q }, target: got, cache: 2 }
    Reply: { directive: ModifyMessage, body: $.memory.got }
  get /uncached:
    Get: { directive: Pull, host: "${host}", path: /count, queryParams: { q: $.message.query.q }, target: got }
    Reply: { directive: ModifyMessage, body: $.memory.got }
  get /missing/lenient:
    Get: { directive: Pull, host: "${host}", path: /missing, target: got, verify: false, cache: 2 }
    Reply: { directive: ModifyMessage, body: { got: $.memory.got } }
  get /missing/strict:
    Get: { directive: Pull, host: "${host}", path: /missing, target: got }
    Reply: { directive: ModifyMessage, body: { got: $.memory.got } }
  get /slow:
    Get: { directive: Pull, host: "${host}", path: /slow, target: got, timeout: 1 }
    Reply: { directive: ModifyMessage, body: { got: $.memory.got } }
`,
      },
    },
  });
});
afterAll(async () => {
  await anvil?.dispose();
  await upstream?.close();
});

describe('Pull', () => {
  it('with cache: 2, answers an identical call from the cache, a different query goes upstream', async () => {
    const first = await anvil.request('/pulls/cached?q=a');
    expect(first.status, first.text).toBe(200);
    expect(first.json()).toEqual({ hits: 1, query: { q: 'a' } });
    expect(upstream.hits('/count')).toBe(1);

    const second = await anvil.request('/pulls/cached?q=a');
    expect(second.status).toBe(200);
    expect(second.json()).toEqual({ hits: 1, query: { q: 'a' } }); // the same answer, kept
    expect(upstream.hits('/count')).toBe(1);

    const other = await anvil.request('/pulls/cached?q=b');
    expect(other.json()).toEqual({ hits: 2, query: { q: 'b' } });
    expect(upstream.hits('/count')).toBe(2);

    // Still cached for both queries…
    expect((await anvil.request('/pulls/cached?q=a')).json().hits).toBe(1);
    expect((await anvil.request('/pulls/cached?q=b')).json().hits).toBe(2);
    expect(upstream.hits('/count')).toBe(2);

    // …until the 2 s are over: then the call goes upstream again.
    const fresh = await eventually(
      async () => {
        const reply = await anvil.request('/pulls/cached?q=a');
        return reply.json().hits > 2 ? reply : null;
      },
      4_000,
      200,
    );
    expect(fresh.json()).toEqual({ hits: 3, query: { q: 'a' } });
    expect(upstream.hits('/count')).toBe(3);
  });

  it('without cache, every call goes upstream', async () => {
    const before = upstream.hits('/count');
    await anvil.request('/pulls/uncached?q=z');
    await anvil.request('/pulls/uncached?q=z');
    expect(upstream.hits('/count')).toBe(before + 2);
  });

  it('with verify off, lets a 404 through into memory (and never caches it)', async () => {
    const reply = await anvil.request('/pulls/missing/lenient');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({ got: { error: 'nope' } });
    await anvil.request('/pulls/missing/lenient');
    expect(upstream.hits('/missing')).toBe(2);
  });

  it('with verify on (the default), turns the 404 into a 502', async () => {
    const before = upstream.hits('/missing');
    const reply = await anvil.request('/pulls/missing/strict');
    expect(reply.status).toBe(502);
    expect(reply.json()).toEqual({ error: 'Bad Gateway' });
    expect(upstream.hits('/missing')).toBe(before + 1);
    await eventually(() => anvil.output().includes(`http://127.0.0.1:${upstream.port}/missing answered 404`), 5_000);
  });

  it('with timeout: 1, answers 504 when the upstream takes 2 s', async () => {
    const started = Date.now();
    const reply = await anvil.request('/pulls/slow');
    const took = Date.now() - started;
    expect(reply.status).toBe(504);
    expect(reply.json()).toEqual({ error: 'Gateway Timeout' });
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(1_900);
    expect(upstream.hits('/slow')).toBe(1);
  });
});
