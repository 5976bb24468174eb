import type { Socket } from 'node:net';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { notePeerFromProxyHeader } from './client-address.js';
import { parseProxyV2 } from './proxy-protocol.js';

/**
 * With `--proxy-protocol`: each connection must start with a PROXY protocol v2 header (HAProxy's
 * `send-proxy-v2`). The header is read here and the client's address kept for the connection;
 * `handOver(client)` (client: the header's address, or null for a LOCAL header) then gets the socket
 * with the bytes that followed the header pushed back, and returns false when it refused it (it
 * answered and closed it then). A connection without a valid header within `timeoutMs` is closed:
 * behind a balancer, anything else is someone going around it.
 */
export function readProxyHeader(
  socket: Socket,
  timeoutMs: number,
  log: InstanceLog,
  handOver: (socket: Socket, client: string | null) => boolean,
): void {
  let received: Buffer = Buffer.alloc(0);
  const timer = setTimeout(() => refuse('no PROXY protocol header in time'), timeoutMs);
  const onData = (chunk: Buffer) => {
    received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
    const header = parseProxyV2(received);
    if (header.kind === 'incomplete') return;
    if (header.kind === 'invalid') return refuse(header.reason);
    stopReading();
    socket.off('error', onError);
    socket.off('close', stopReading);
    if (header.kind === 'proxy') notePeerFromProxyHeader(socket, header.address);
    socket.pause();
    if (!handOver(socket, header.kind === 'proxy' ? header.address : null)) return;
    const rest = received.subarray(header.length);
    if (rest.length > 0) socket.unshift(rest);
    socket.resume();
  };
  // An error before the hand-over (a reset): the socket is destroyed by node, the timer must go.
  const onError = () => stopReading();
  const stopReading = () => {
    clearTimeout(timer);
    socket.off('data', onData);
  };
  const refuse = (reason: string) => {
    stopReading();
    log.info({ ip: socket.remoteAddress, reason }, 'connection refused: PROXY protocol');
    socket.destroy();
  };
  socket.on('data', onData);
  socket.on('error', onError);
  // A client that leaves before sending a header: nothing to refuse later.
  socket.once('close', stopReading);
}
