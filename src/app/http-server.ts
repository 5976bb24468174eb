import { createServer, type RequestListener, type Server } from 'node:http';
import type { Server as NetServer } from 'node:net';
import { proxyProtocolListener } from '../http/proxy-listener.js';
import type { InstanceLog } from '../logs/instance-log.js';
import { answerClientError } from '../router/client-error.js';
import type { Metrics } from '../router/metrics.js';
import type { InstanceOptions } from './instance-options.js';

export interface ListeningServer {
  server: Server;
  /** What listens: the HTTP server itself, or with --proxy-protocol the TCP listener that reads the header first. */
  listener: NetServer;
  /** The port it listens on (the one the OS chose for `--port 0`). */
  port: number;
}

/** The node HTTP server in front of `handle`, listening on `--listen`:`--port`. */
export async function listenHttp(options: InstanceOptions, handle: RequestListener, metrics: Metrics, log: InstanceLog): Promise<ListeningServer> {
  const server = createHttpServer(options.headersTimeoutMs, handle);
  server.on('connection', () => metrics.connections.inc());
  server.on('clientError', answerClientError(log));
  const listener = options.proxyProtocol ? proxyProtocolListener(server, options.headersTimeoutMs, log) : server;
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port, options.listen, () => resolve());
  });
  const address = listener.address();
  return { server, listener, port: typeof address === 'object' && address !== null ? address.port : options.port };
}

function createHttpServer(headersTimeoutMs: number, handle: RequestListener): Server {
  // node's requestTimeout bounds receiving a request (headers and body); our request timeout (504)
  // bounds the API's answer and is enforced by the front door.
  const receiveTimeoutMs = Math.max(headersTimeoutMs, 30_000);
  return createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: receiveTimeoutMs,
      keepAliveTimeout: 5_000,
      // node checks both timeouts only this often (30 s by default): check at least every second.
      connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs),
    },
    handle,
  );
}
