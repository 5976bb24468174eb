import { createServer, type RequestListener, type Server } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import { bareAddress, parseTrustedProxies } from '../edge/client-address.js';
import { ConnectionGate } from '../edge/connection-gate.js';
import type { ConnectionLimits } from '../edge/connection-limits.js';
import { readProxyHeader } from '../edge/proxy-listener.js';
import { refuseBeforeSocket } from '../edge/refuse-before-socket.js';
import { connectionRefuser } from '../edge/refuse-connection.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { answerClientError } from '../edge/client-error.js';
import type { Metrics } from '../meters/metrics.js';
import type { InstanceOptions } from './instance-options.js';

export interface ListeningServer {
  server: Server;
  /** What listens: the HTTP server itself (with --proxy-protocol too: the header is read before node:http takes the socket). */
  listener: NetServer;
  /** The port it listens on (the one the OS chose for `--port 0`). */
  port: number;
}

/**
 * The node HTTP server in front of `handle`, listening on `--listen`:`--port`; its client
 * connections bounded by `limits` (null: not bounded, the cluster's internal listener).
 */
export async function listenHttp(
  options: InstanceOptions,
  handle: RequestListener,
  metrics: Metrics,
  log: InstanceLog,
  limits: ConnectionLimits | null,
): Promise<ListeningServer> {
  const server = createHttpServer(options.headersTimeoutMs, handle);
  const setUp = takeConnectionSetup(server);
  const gate = limits === null ? null : connectionGate(server, limits, options.trustedProxies, metrics);
  const refuser = limits === null ? null : connectionRefuser(limits);
  server.on('connection', (socket: Socket) => {
    metrics.connections.inc();
    const peer = bareAddress(socket.remoteAddress ?? '');
    // Reset before it was taken: nothing to serve.
    if (peer === '') return void socket.destroy();
    const refusal = gate?.admit(socket, peer, !options.proxyProtocol) ?? null;
    if (refusal !== null) return refuser!.refuse(socket, refusal);
    if (!options.proxyProtocol) return setUp(socket);
    readProxyHeader(socket, options.headersTimeoutMs, log, (socket, client) => {
      const refused = client === null ? null : (gate?.identify(socket, client) ?? null);
      if (refused !== null) {
        refuser!.refuse(socket, refused);
        return false;
      }
      setUp(socket);
      return true;
    });
  });
  server.on('clientError', answerClientError(log));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.listen, () => resolve());
  });
  // A flood from one address, once its refusals are no longer answered, is closed before node
  // makes Sockets of it (behind a balancer the peer is the balancer: the header decides).
  if (gate !== null && refuser !== null && !options.proxyProtocol) {
    refuseBeforeSocket(server, (address) => {
      if (refuser.answersLeft() || !gate.refusesClient(address)) return false;
      metrics.connections.inc();
      return true;
    });
  }
  const address = server.address();
  return {
    server,
    listener: server,
    port: typeof address === 'object' && address !== null ? address.port : options.port,
  };
}

/**
 * node:http sets a connection up (its parser, and the tracking behind `headersTimeout`,
 * `requestTimeout` and `closeIdleConnections`) in its own 'connection' listener. It is taken off
 * the server and returned, to be called once Anvil has admitted the socket and read its PROXY
 * header: the server still listens itself, so node tracks the connections it is handed (it does
 * not for a server that never listened, one fed with `emit('connection')`).
 */
function takeConnectionSetup(server: Server): (socket: Socket) => void {
  const listeners = server.listeners('connection') as Array<(this: Server, socket: Socket) => void>;
  server.removeAllListeners('connection');
  return (socket) => {
    for (const listener of listeners) listener.call(server, socket);
  };
}

/** The gate, told which connections have a request in flight (evicted only from the client holding the most). */
function connectionGate(
  server: Server,
  limits: ConnectionLimits,
  trustedProxies: string | null,
  metrics: Metrics,
): ConnectionGate {
  const trusted = parseTrustedProxies(trustedProxies);
  const gate = new ConnectionGate(
    limits,
    (address) => trusted !== null && trusted.check(address, address.includes(':') ? 'ipv6' : 'ipv4'),
    {
      refused: (reason) => metrics.connectionsRefused.inc({ reason }),
      evicted: (state) => metrics.connectionsEvicted.inc({ state }),
    },
  );
  // The gate's own method: no closure per request (the hot path).
  server.on('request', gate.requestStarted.bind(gate));
  metrics.watchConnections(() => gate.open);
  return gate;
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
