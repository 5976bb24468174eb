import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { peerAddress } from '../edge/client-address.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { sendFailure } from '../edge/http-response.js';
import { Errors } from '../../shared/errors.js';
import { safeEqual } from '../../shared/security/safe-equal.js';
import {
  CLIENT_ADDRESS_HEADER,
  CLUSTER_SECRET_HEADER,
  INTERNAL_HEADERS,
  INTERNAL_OP_HEADER,
  PLACEMENT_EPOCH_HEADER,
} from './internal-headers.js';

/** The client's address another instance forwarded with the request, by request. */
const forwardedClients = new WeakMap<IncomingMessage, string>();

/** The placement epoch the forwarding instance knew, by request. */
const forwardedEpochs = new WeakMap<IncomingMessage, number>();

/** On the internal port: the epoch of the owner the forwarder sent the request to (0: none given). */
export function forwardedEpoch(req: IncomingMessage): number {
  return forwardedEpochs.get(req) ?? 0;
}

/** On the internal port: the address the forwarding instance gave, else the peer's. */
export function internalClientAddress(req: IncomingMessage): string {
  return forwardedClients.get(req) ?? peerAddress(req.socket);
}

/** An operation of the internal port itself (internal-ops.ts), named by its INTERNAL_OP_HEADER. */
export type InternalOps = (op: string, req: IncomingMessage, res: ServerResponse) => void;

/**
 * The internal listener's handler: a request without the cluster secret is refused with 401 before
 * anything else is read. An accepted operation (a job run, a bus call) goes to `ops`; a forwarded
 * request loses the internal headers (the API never sees the secret) and keeps the client's
 * address its forwarder gave, then goes to `handle`.
 */
export function internalDoor(
  secret: string,
  handle: RequestListener,
  ops: InternalOps,
  log: InstanceLog,
): RequestListener {
  return (req, res) => {
    const given = req.headers[CLUSTER_SECRET_HEADER];
    if (typeof given !== 'string' || !safeEqual(secret, given)) {
      log.info(
        { peer: peerAddress(req.socket), verb: req.method },
        'internal port: request refused without the cluster secret: 401',
      );
      return sendFailure(res, Errors.unauthorized(), { connection: 'close' });
    }
    const client = req.headers[CLIENT_ADDRESS_HEADER];
    if (typeof client === 'string' && isIP(client) !== 0) forwardedClients.set(req, client);
    const epoch = Number(req.headers[PLACEMENT_EPOCH_HEADER]);
    if (Number.isSafeInteger(epoch) && epoch > 0) forwardedEpochs.set(req, epoch);
    const op = req.headers[INTERNAL_OP_HEADER];
    if (typeof op === 'string') return ops(op, req, res);
    const raw = req.rawHeaders;
    const kept: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2)
      if (!INTERNAL_HEADERS.has(raw[i]!.toLowerCase())) kept.push(raw[i]!, raw[i + 1]!);
    req.rawHeaders = kept;
    for (const name of INTERNAL_HEADERS) delete req.headers[name];
    handle(req, res);
  };
}
