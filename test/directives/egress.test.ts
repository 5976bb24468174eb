import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { eventually } from '../helpers/instance.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

// SSRF (SECURITY.md point 3, SPEC §9): without ANVIL_EGRESS_ALLOW, Pull and Http refuse loopback,
// private, link-local and unspecified targets, whether written as a literal address, in another
// spelling of one, or behind a name that resolves to one. The refusal is a 502 whose real message
// is in the instance log, and nothing reaches the upstream (its counter stays 0). Redirects are
// never followed, even when the first hop is allowed. An IPv6 address that embeds a refused IPv4
// address (IPv4-mapped, -compatible, -translated, 6to4, NAT64, Teredo) is refused as that address,
// and the log says which address it carries (the whole table is test/egress/embedded-ipv4.test.ts).
// In-process (helpers/in-process-apis.ts): the actor's outgoing HTTP under the instance's policy.

let upstream: Upstream;
let closed: InProcessApis;
let allowed: InProcessApis;

/** Targets that must be refused; `port` is the live upstream's (so a leak would be counted). */
function targets(port: number): Array<{ name: string; host: string; logged: string; carries?: string }> {
  return [
    {
      name: 'literal loopback',
      host: `http://127.0.0.1:${port}`,
      logged: 'outgoing connection to 127.0.0.1 (127.0.0.1) refused',
    },
    {
      name: 'a name resolving to loopback',
      host: `http://localhost:${port}`,
      logged: 'outgoing connection to localhost (127.0.0.1) refused',
    },
    { name: 'IPv6 loopback', host: `http://[::1]:${port}`, logged: 'outgoing connection to [::1] (::1) refused' },
    {
      name: 'cloud metadata (link-local)',
      host: 'http://169.254.169.254',
      logged: 'outgoing connection to 169.254.169.254 (169.254.169.254) refused',
    },
    { name: 'private 10/8', host: 'http://10.0.0.1', logged: 'outgoing connection to 10.0.0.1 (10.0.0.1) refused' },
    {
      name: 'unspecified 0.0.0.0',
      host: `http://0.0.0.0:${port}`,
      logged: 'outgoing connection to 0.0.0.0 (0.0.0.0) refused',
    },
    // Other spellings of loopback, normalised by the URL parser before the check.
    {
      name: 'loopback as a decimal number',
      host: `http://2130706433:${port}`,
      logged: 'outgoing connection to 127.0.0.1 (127.0.0.1) refused',
    },
    {
      name: 'IPv4-mapped IPv6 loopback',
      host: `http://[::ffff:127.0.0.1]:${port}`,
      logged: 'outgoing connection to [::ffff:7f00:1] (::ffff:7f00:1) refused',
      carries: '127.0.0.1 (IPv4-mapped)',
    },
    // IPv6 forms that carry an IPv4 address, judged as the address they carry.
    {
      name: 'IPv4-compatible loopback',
      host: `http://[::127.0.0.1]:${port}`,
      logged: 'outgoing connection to [::7f00:1] (::7f00:1) refused',
      carries: '127.0.0.1 (IPv4-compatible)',
    },
    {
      name: 'IPv4-translated loopback',
      host: `http://[::ffff:0:127.0.0.1]:${port}`,
      logged: 'outgoing connection to [::ffff:0:7f00:1] (::ffff:0:7f00:1) refused',
      carries: '127.0.0.1 (IPv4-translated)',
    },
    {
      name: '6to4 of loopback',
      host: `http://[2002:7f00:1::1]:${port}`,
      logged: 'outgoing connection to [2002:7f00:1::1] (2002:7f00:1::1) refused',
      carries: '127.0.0.1 (6to4)',
    },
    {
      name: 'NAT64 of the metadata address',
      host: 'http://[64:ff9b::169.254.169.254]',
      logged: 'outgoing connection to [64:ff9b::a9fe:a9fe] (64:ff9b::a9fe:a9fe) refused',
      carries: '169.254.169.254 (NAT64)',
    },
    {
      name: 'Teredo whose client is loopback',
      host: `http://[2001:0:4137:9e76:8000:ffff:80ff:fffe]:${port}`,
      logged:
        'outgoing connection to [2001:0:4137:9e76:8000:ffff:80ff:fffe] (2001:0:4137:9e76:8000:ffff:80ff:fffe) refused',
      carries: '127.0.0.1 (Teredo client) and 65.55.158.118 (Teredo server)',
    },
  ];
}

function egressApi(port: number): string {
  let yaml = 'key: egress\nendpoints:\n';
  targets(port).forEach((t, i) => {
    yaml += `  get /pull/${i}:
    Get: { directive: Pull, host: "${t.host}", path: /count, target: got, verify: true, timeout: 3 }
    Reply: { directive: ModifyMessage, body: $.memory.got }
  get /http/${i}:
    Forward: { directive: Http, host: "${t.host}", timeout: 3, connectTimeout: 2 }
`;
  });
  return yaml;
}

/** Directive errors the instance logged (the real message behind a generic 502). */
function loggedErrors(anvil: InProcessApis): string[] {
  return anvil
    .logLines()
    .filter((l) => l.msg === 'directive error')
    .map((l) => String(l.message));
}

beforeAll(async () => {
  upstream = await startUpstream();
  const redirects = `key: redirects
endpoints:
  # Http forwards the API-relative path: /redirect and /redirect-local reach the upstream as such.
  get /redirect:
    Forward: { directive: Http, host: "http://127.0.0.1:${upstream.port}" }
  get /pull/metadata:
    Get: { directive: Pull, host: "http://127.0.0.1:${upstream.port}", path: /redirect, target: got }
    Reply: { directive: ModifyMessage, body: { got: $.memory.got } }
  get /redirect-local:
    Forward: { directive: Http, host: "http://127.0.0.1:${upstream.port}" }
  get /pull/local:
    Get: { directive: Pull, host: "http://127.0.0.1:${upstream.port}", path: /redirect-local, target: got }
    Reply: { directive: ModifyMessage, body: { got: $.memory.got } }
  get /still/{i}:
    Forward: { directive: Http, host: $.message.query.host, timeout: 3, connectTimeout: 2 }
`;
  [closed, allowed] = await Promise.all([
    // An empty allow list (set explicitly, whatever the test runner's environment holds).
    startInProcess({ env: { ANVIL_EGRESS_ALLOW: '' }, apis: { egress: { 'api.yaml': egressApi(upstream.port) } } }),
    startInProcess({ env: { ANVIL_EGRESS_ALLOW: '127.0.0.1' }, apis: { redirects: { 'api.yaml': redirects } } }),
  ]);
});
afterAll(async () => {
  await Promise.all([closed?.dispose(), allowed?.dispose()]);
  await upstream?.close();
});

describe('egress without ANVIL_EGRESS_ALLOW', () => {
  // Each case is checked on its own, so a failure names the target that leaked.
  for (const [i, target] of targets(0).entries()) {
    it(`refuses ${target.name} (${target.host.replace(/:0$/, ':<port>')}) for Pull and Http`, async () => {
      const t = targets(upstream.port)[i]!;
      const before = upstream.total();
      const mentioned = () => loggedErrors(closed).filter((m) => m.includes(t.logged));
      const loggedBefore = mentioned().length;

      const pulled = await closed.request(`/egress/pull/${i}`);
      expect(pulled.status, pulled.text).toBe(502);
      expect(pulled.json()).toEqual({ error: 'Bad Gateway' }); // the real reason stays in the log

      const forwarded = await closed.request(`/egress/http/${i}`);
      expect(forwarded.status, forwarded.text).toBe(502);
      expect(forwarded.json()).toEqual({ error: 'Bad Gateway' });

      expect(upstream.total()).toBe(before);
      // The log reaches the router's stdout a moment after the response: wait for both lines.
      await eventually(() => mentioned().length >= loggedBefore + 2, 5_000).catch(() => undefined);
      expect(mentioned().length - loggedBefore, loggedErrors(closed).join('\n')).toBe(2);
      for (const m of mentioned()) expect(m).toMatch(/private, loopback and link-local addresses are not reachable/);
      if (t.carries !== undefined) for (const m of mentioned()) expect(m).toContain(`carries ${t.carries}`);
    });
  }

  it('let nothing at all reach the upstream', () => {
    expect(upstream.total()).toBe(0);
  });
});

describe('egress with ANVIL_EGRESS_ALLOW=127.0.0.1', () => {
  it('does not follow a redirect to the metadata address', async () => {
    // Http hands the 302 and its location back to the client.
    const reply = await allowed.request('/redirects/redirect');
    expect(reply.status, reply.text).toBe(302);
    expect(reply.headers.location).toBe('http://169.254.169.254/latest/meta-data');
    // Pull gets the 302 (not >= 400, so verify passes) with its empty body: it did not follow it.
    const pulled = await allowed.request('/redirects/pull/metadata');
    expect(pulled.status, pulled.text).toBe(200);
    expect(pulled.json()).toEqual({ got: null });
    expect(upstream.hits('/redirect')).toBe(2);
  });

  it('does not follow a redirect to another loopback URL, even one the allow list permits', async () => {
    const forwarded = await allowed.request('/redirects/redirect-local');
    expect(forwarded.status, forwarded.text).toBe(302);
    expect(forwarded.headers.location).toBe(`http://127.0.0.1:${upstream.port}/landing`);
    const pulled = await allowed.request('/redirects/pull/local');
    expect(pulled.status, pulled.text).toBe(200);
    expect(pulled.json()).toEqual({ got: null });
    expect(upstream.hits('/redirect-local')).toBe(2);
    expect(upstream.hits('/landing')).toBe(0);
  });

  it('allows the allowed address in an IPv6 form that carries it: [::ffff:127.0.0.1]', async () => {
    const before = upstream.hits('/still/2');
    const reply = await allowed.request(
      `/redirects/still/2?host=${encodeURIComponent(`http://[::ffff:127.0.0.1]:${upstream.port}`)}`,
    );
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toMatchObject({ method: 'GET', path: '/still/2' });
    expect(upstream.hits('/still/2')).toBe(before + 1);
  });

  it('still refuses what the allow list does not name: ::1, 169.254.169.254, 10.0.0.1, NAT64 of 10.0.0.1', async () => {
    const before = upstream.total();
    const earlier = allowed.logLines().length;
    for (const host of [
      `http://[::1]:${upstream.port}`,
      'http://169.254.169.254',
      'http://10.0.0.1',
      'http://[64:ff9b::10.0.0.1]',
    ]) {
      const reply = await allowed.request(`/redirects/still/1?host=${encodeURIComponent(host)}`);
      expect(reply.status, host).toBe(502);
    }
    const expected = [
      'outgoing connection to [::1] (::1)',
      'outgoing connection to 169.254.169.254 (169.254.169.254)',
      'outgoing connection to 10.0.0.1 (10.0.0.1)',
      'outgoing connection to [64:ff9b::a00:1] (64:ff9b::a00:1)',
    ];
    const refusals = () =>
      allowed
        .logLines()
        .slice(earlier)
        .filter((l) => l.msg === 'directive error' && String(l.message).includes(' refused: private'))
        .map((l) => String(l.message).split(' refused')[0]);
    await eventually(() => expected.every((e) => refusals().includes(e)), 5_000).catch(() => undefined);
    expect(refusals()).toEqual(expect.arrayContaining(expected));
    expect(upstream.total()).toBe(before);
  });
});
