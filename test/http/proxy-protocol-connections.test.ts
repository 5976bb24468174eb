import { afterEach, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { HELD_REQUESTS_API, rawConnection } from '../helpers/loopback-clients.js';
import { proxyV2Header } from '../helpers/proxy-header.js';
import { exchange } from '../helpers/raw-http.js';
import { waitFor, waitForStarted } from '../helpers/wait-for.js';

// Issue 41, case 10: with --proxy-protocol the sockets were handed to a node:http server that never
// listened, and node tracks the connections only of a server that listens: --headers-timeout was
// never applied (a partial head stayed open, a slowloris hole behind HAProxy) and a drain could not
// close idle keep-alive connections (it waited for their keep-alive timeout). The server now listens
// itself and reads the PROXY header before node:http takes the socket. The per-client connection
// bound (case 4) counts the client the header names.

const API = HELD_REQUESTS_API;

const client = proxyV2Header({ v4: [203, 0, 113, 7] });

const running: TestInstance[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.dispose()));
});

/** True once `raw` holds a whole response framed by content-length. */
function answered(raw: string): boolean {
  const end = raw.indexOf('\r\n\r\n');
  const length = /\r\ncontent-length: (\d+)/i.exec(raw);
  return end >= 0 && length !== null && raw.length >= end + 4 + Number(length[1]);
}

describe("--proxy-protocol keeps node:http's connection handling", () => {
  it('answers 408 to a client that does not finish its headers within --headers-timeout', async () => {
    const anvil = await startInstance({ apis: { ping: API }, args: ['--proxy-protocol', '--headers-timeout', '1s'] });
    running.push(anvil);
    // Half-closes only after 8 s of silence: the 408 must come before (node checks every second).
    const reply = await exchange(anvil.port, [client, 'GET /ping/ping HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n'], {
      endWhenIdleMs: 8_000,
    });
    expect(reply.status).toBe(408);
    expect(
      (await exchange(anvil.port, [client, 'GET /ping/ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n']))
        .status,
    ).toBe(200);
  }, 60_000);

  it("bounds connections per client by the address the PROXY header names, not the balancer's", async () => {
    const anvil = await startInstance({
      apis: { ping: API },
      args: ['--proxy-protocol', '--max-connections-per-client', '2'],
    });
    running.push(anvil);
    const head = 'GET /ping/ping HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n';
    const same = await Promise.all(
      Array.from({ length: 3 }, () =>
        rawConnection(anvil.port, '127.0.0.1', Buffer.concat([client, Buffer.from(head)])),
      ),
    );
    await waitFor(() => same.some((c) => c.isClosed()), {
      what: 'one of the three connections of 203.0.113.7 closed',
      timeoutMs: 30_000,
    });
    const refused = same.filter((c) => c.isClosed());
    expect(refused).toHaveLength(1);
    expect(refused[0]!.received()).toMatch(/^HTTP\/1\.1 429 /);
    // Another client behind the same balancer (the same peer, 127.0.0.1) is served.
    const other = await exchange(anvil.port, [
      proxyV2Header({ v4: [203, 0, 113, 8] }),
      'GET /ping/ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    ]);
    expect(other.status).toBe(200);
    for (const c of same) c.socket.destroy();
  });

  it('counts the IPv6 clients of one /64 as one client for --max-connections-per-client', async () => {
    const anvil = await startInstance({
      apis: { ping: API },
      args: ['--proxy-protocol', '--max-connections-per-client', '2'],
    });
    running.push(anvil);
    const head = Buffer.from('GET /ping/ping HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n');
    // 2001:db8::1, ::2 and ::3: three addresses of one /64.
    const inOne64 = [1, 2, 3].map((last) =>
      proxyV2Header({ v6: [0x20, 0x01, 0x0d, 0xb8, ...Array<number>(11).fill(0), last] }),
    );
    const same = await Promise.all(
      inOne64.map((header) => rawConnection(anvil.port, '127.0.0.1', Buffer.concat([header, head]))),
    );
    await waitFor(() => same.some((c) => c.isClosed()), {
      what: 'one of the three connections of 2001:db8::/64 closed',
      timeoutMs: 30_000,
    });
    const refused = same.filter((c) => c.isClosed());
    expect(refused).toHaveLength(1);
    expect(refused[0]!.received()).toMatch(/^HTTP\/1\.1 429 /);
    // 2001:db8:0:1::1 is another /64: served.
    const other = await exchange(anvil.port, [
      proxyV2Header({ v6: [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, ...Array<number>(7).fill(0), 1] }),
      'GET /ping/ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    ]);
    expect(other.status).toBe(200);
    for (const c of same) c.socket.destroy();
  });

  it('closes an idle keep-alive connection as soon as it drains, while a request is still in flight', async () => {
    const anvil = await startInstance({ apis: { ping: API }, args: ['--proxy-protocol'] });
    running.push(anvil);
    const idle = await rawConnection(
      anvil.port,
      '127.0.0.1',
      Buffer.concat([client, Buffer.from('GET /ping/ping HTTP/1.1\r\nHost: localhost\r\n\r\n')]),
    );
    await waitFor(() => answered(idle.received()), {
      what: 'the answer on the kept-alive connection',
      timeoutMs: 30_000,
    });
    expect(idle.received()).toMatch(/^HTTP\/1\.1 200 /);
    // A request held 4 s, less than node's keep-alive timeout (5 s): the idle connection must be
    // closed by the drain itself, before that answer, not by its keep-alive timeout after it.
    const slow = await rawConnection(
      anvil.port,
      '127.0.0.1',
      Buffer.concat([
        client,
        Buffer.from('GET /ping/wait/4000 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
      ]),
    );
    await waitForStarted(anvil, 'ping', (l) => l.route === 'get /wait/{ms}', {
      what: 'GET /ping/wait/4000',
      timeoutMs: 30_000,
    });
    anvil.signal('SIGTERM');
    const first = await Promise.race([idle.closed.then(() => 'idle closed'), slow.closed.then(() => 'slow answered')]);
    expect(first).toBe('idle closed');
    expect(slow.received()).toBe('');
    await slow.closed;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(await anvil.waitForExit()).toBe(0);
  }, 60_000);
});
