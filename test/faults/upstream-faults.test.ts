import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundLoad } from '../helpers/background-load.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

// Upstreams that misbehave at the TCP level: one that accepts and never answers, one that resets
// mid-body, one that trickles a byte every 200 ms (before the fix it held Pull until the request
// timeout: undici's timeouts are idle timers), one that sends 10 MB, one that sends more than
// Anvil holds. Each ends in the documented status, and the API's other endpoint keeps answering.

const TEN_MB = 10_000_000;
const OVER_LIMIT = 11 * 1024 * 1024;

/** An HTTP/1.1 upstream written on raw sockets, so it can do what a well-behaved server never does. */
function hostileUpstream(): Server {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const path = head.split(' ')[1] ?? '/';
      head = '';
      answer(socket, path);
    });
  });
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  return server;
}

function answer(socket: Socket, path: string): void {
  const headers = (length: number) =>
    `HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: ${length}\r\n\r\n`;
  if (path.endsWith('/hang')) return; // accepted, read, never answered
  if (path.endsWith('/reset')) {
    socket.write(headers(100_000) + 'x'.repeat(1_000), () => socket.resetAndDestroy());
    return;
  }
  if (path.endsWith('/trickle')) {
    socket.write(headers(1_000));
    const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write('x')), 200);
    return;
  }
  const size = path.endsWith('/huge') ? OVER_LIMIT : TEN_MB;
  socket.write(headers(size));
  socket.write(Buffer.alloc(size, 0x61));
}

describe('misbehaving upstreams', () => {
  let upstream: Server;
  let anvil: TestInstance;

  beforeAll(async () => {
    upstream = hostileUpstream();
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const host = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
    anvil = await startInstance({
      apis: {
        up: {
          'api.yaml': `key: up
endpoints:
${['hang', 'reset', 'trickle']
  .map(
    (what) => `  get /pull/${what}:
    Fetch: { directive: Pull, host: "${host}", path: /${what}, target: got, timeout: 1 }
    Reply: { directive: ModifyMessage, body: { got: true } }
`,
  )
  .join('')}  get /http/{what}:
    Forward: { directive: Http, host: "${host}", timeout: 5 }
  get /ping:
    Pong: { directive: Ping }
`,
        },
      },
      env: { ANVIL_EGRESS_ALLOW: '127.0.0.1' },
      args: ['--cells', '1'],
    });
  });
  afterAll(async () => {
    await anvil?.dispose();
    await new Promise((r) => upstream?.close(r));
  });

  it('ends each in its status while the other endpoint of the API keeps answering', async () => {
    const neighbour = backgroundLoad(anvil, '/up/ping', 2);
    // At once: each misbehaving upstream holds its own request, none holds the others.
    const [hang, reset, trickle, big, huge] = await Promise.all([
      anvil.request('/up/pull/hang'),
      anvil.request('/up/pull/reset'),
      anvil.request('/up/pull/trickle'),
      anvil.request('/up/http/big'),
      anvil.request('/up/http/huge'),
    ]);
    await neighbour.stop();
    expect(hang.status).toBe(504);
    expect(reset.status).toBe(502);
    expect(trickle.status).toBe(504);
    expect(big.status).toBe(200);
    expect(big.text.length).toBe(TEN_MB);
    expect(huge.status).toBe(502);
    expect(neighbour.statuses().filter((s) => s !== 200)).toEqual([]);
    expect(neighbour.replies.length).toBeGreaterThan(5);
  });
});
