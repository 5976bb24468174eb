import net from 'node:net';
import { request } from 'node:http';

// Clients from chosen loopback addresses (127.0.0.0/8 is all loopback on Linux): tests of per-address
// bounds tell an attacker from a neighbour by the address each connects from.

/** A raw connection from `localAddress` that writes `payload` and keeps what comes back. */
export interface RawConnection {
  socket: net.Socket;
  /** Everything received so far (latin1). */
  received(): string;
  /** Resolves once the connection is closed, by either side. */
  closed: Promise<void>;
  isClosed(): boolean;
}

export function rawConnection(port: number, localAddress: string, payload: Buffer | string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress });
    const chunks: Buffer[] = [];
    let closed = false;
    const closedPromise = new Promise<void>((done) =>
      socket.once('close', () => {
        closed = true;
        done();
      }),
    );
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.write(payload);
      resolve({
        socket,
        received: () => Buffer.concat(chunks).toString('latin1'),
        closed: closedPromise,
        isClosed: () => closed,
      });
    });
    socket.once('error', reject);
  });
}

/** A GET on a new connection from `localAddress` (closed after the answer). */
export function getFrom(
  port: number,
  path: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, localAddress, headers: { host: 'localhost', ...headers }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject).end();
  });
}

/** A request head cut short: node:http waits for the rest. */
export const PARTIAL_HEAD = 'GET /ping/ping HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n';

/** The API of the connection tests: a ping, a request held in flight for `ms` (logged as it starts), and a POST that takes a body. */
export const HELD_REQUESTS_API = {
  'api.yaml': `key: ping
endpoints:
  get /ping:
    Pong: { directive: Ping }
  get /wait/{ms}:
    Started: { directive: Log }
    Wait: { directive: Delay, ms: $.message.pathParam.ms }
    Pong: { directive: Ping }
  post /upload:
    Pong: { directive: Ping }
`,
};
