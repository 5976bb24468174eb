import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getFrom } from '../helpers/loopback-clients.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { proxyV2Header } from '../helpers/proxy-header.js';
import { exchange } from '../helpers/raw-http.js';
import { waitFor } from '../helpers/wait-for.js';

// Behind a load balancer every connection comes from the balancer: the client's address has to come
// from a PROXY protocol v2 header (--proxy-protocol) or a trusted proxy's x-forwarded-for
// (--trusted-proxy), or per-IP limits become one bucket and the metrics' loopback rule admits all.

const WHO = {
  'api.yaml': `key: who
endpoints:
  get /ip:
    Reply: { directive: ModifyMessage, body: { ip: $.memory.ip } }
  get /limited:
    Limit: { directive: RateLimit, minuteIp: 2 }
    Pong: { directive: Ping }
  get /calculated:
    Ip: { directive: CalculateIp }
    Mask: { directive: AnonymizeIp, ip: $.memory.ip, target: masked }
    Reply: { directive: ModifyMessage, body: { ip: $.memory.ip, masked: $.memory.masked } }
`,
};

const get = (path: string, host = 'localhost') => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
const client = (last: number) => proxyV2Header({ v4: [203, 0, 113, last] });

describe('--proxy-protocol', () => {
  let anvil: TestInstance;
  beforeAll(async () => {
    anvil = await startInstance({ apis: { who: WHO }, args: ['--proxy-protocol'] });
  });
  afterAll(async () => {
    await anvil?.stop();
  });

  it('takes the client address from the header, whether it comes alone or with the request', async () => {
    const together = await exchange(anvil.port, Buffer.concat([client(7), Buffer.from(get('/who/ip'))]));
    expect(together.status).toBe(200);
    expect(JSON.parse(together.body)).toEqual({ ip: '203.0.113.7' });
    const apart = await exchange(anvil.port, [client(8), get('/who/ip')]);
    expect(JSON.parse(apart.body)).toEqual({ ip: '203.0.113.8' });
    // LOCAL: the balancer's own health check; the connection's peer counts.
    const local = await exchange(anvil.port, [proxyV2Header('local'), get('/who/ip')]);
    expect(JSON.parse(local.body)).toEqual({ ip: '127.0.0.1' });
  });

  it('gives each client its own per-IP counters', async () => {
    const statuses = async (last: number) => {
      const seen: Array<number | null> = [];
      for (let i = 0; i < 3; i++) seen.push((await exchange(anvil.port, [client(last), get('/who/limited')])).status);
      return seen;
    };
    expect(await statuses(20)).toEqual([200, 200, 429]);
    expect(await statuses(21)).toEqual([200, 200, 429]);
  });

  it('closes a connection without a valid header, and says why in the log', async () => {
    const plain = await exchange(anvil.port, get('/who/ip'));
    expect(plain.status).toBeNull();
    expect(plain.raw).toBe('');
    await waitFor(() => anvil.output().includes('connection refused: PROXY protocol'), {
      what: 'the refusal in the log',
    });
  });

  it('judges the metrics loopback rule on the client, not on the balancer', async () => {
    const remote = await exchange(anvil.port, [client(9), get('/anvil/metrics', 'admin.localhost')]);
    expect(remote.status).toBe(401);
    const local = await exchange(anvil.port, [proxyV2Header('local'), get('/anvil/metrics', 'admin.localhost')]);
    expect(local.status).toBe(200);
  });
});

describe('--trusted-proxy', () => {
  let anvil: TestInstance;
  beforeAll(async () => {
    anvil = await startInstance({ apis: { who: WHO }, args: ['--trusted-proxy', '127.0.0.1, 10.0.0.0/8'] });
  });
  afterAll(async () => {
    await anvil?.stop();
  });

  it('believes x-forwarded-for from a trusted peer: the right-most entry that is not a proxy', async () => {
    const reply = await getFrom(anvil.port, '/who/ip', '127.0.0.1', {
      'x-forwarded-for': '6.6.6.6, 198.51.100.9, 10.1.1.1',
    });
    expect(JSON.parse(reply.body)).toEqual({ ip: '198.51.100.9' });
  });

  it('ignores x-forwarded-for from any other peer', async () => {
    const reply = await getFrom(anvil.port, '/who/ip', '127.0.0.2', { 'x-forwarded-for': '198.51.100.9' });
    expect(JSON.parse(reply.body)).toEqual({ ip: '127.0.0.2' });
  });

  it('CalculateIp stores the client address: the peer, or what trusted proxies forwarded', async () => {
    expect((await anvil.request('/who/calculated')).json()).toEqual({ ip: '127.0.0.1', masked: '127.0.0.0' });
    // The client wrote 6.6.6.6 itself; the trusted 10.1.2.3 forwarded what it got from 203.0.113.9.
    const reply = await anvil.request('/who/calculated', {
      headers: { 'x-forwarded-for': '6.6.6.6, 203.0.113.9, 10.1.2.3' },
    });
    expect(reply.json()).toEqual({ ip: '203.0.113.9', masked: '203.0.113.0' });
  });

  it('refuses a malformed list at start, naming the flag', async () => {
    await expect(startInstance({ args: ['--trusted-proxy', '10.0.0.0/33'] })).rejects.toThrow(
      /--trusted-proxy: "10\.0\.0\.0\/33" is not an IP address or CIDR/,
    );
  });
});

describe('--drain-delay', () => {
  it('answers 503 on /anvil/health at once on SIGTERM and serves requests for the delay, then stops', async () => {
    const anvil = await startInstance({ apis: { who: WHO }, args: ['--drain-delay', '1500ms'] });
    try {
      expect((await anvil.request('/anvil/health', { host: 'admin.localhost' })).status).toBe(200);
      anvil.signal('SIGTERM');
      await waitFor(async () => (await anvil.request('/anvil/health', { host: 'admin.localhost' })).status === 503, {
        what: 'health 503',
      });
      const during = await anvil.request('/who/ip');
      expect(during.status).toBe(200);
      expect(await anvil.waitForExit()).toBe(0);
    } finally {
      await anvil.stop();
    }
  });
});
