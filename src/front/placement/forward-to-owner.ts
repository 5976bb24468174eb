import { Agent, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { clientError, Errors } from '../../shared/errors.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { sendFailure } from '../edge/http-response.js';
import { CLIENT_ADDRESS_HEADER, CLUSTER_SECRET_HEADER, PLACEMENT_EPOCH_HEADER, passedOn } from './internal-headers.js';

export interface OwnerTarget {
  /** The placed API (placed-releases.ts placementId). */
  api: string;
  owner: string;
  epoch: number;
  /** `http://address:port` of the owner's internal listener. */
  url: string;
}

export interface ForwarderOptions {
  secret: string;
  /** How long the owner has to start answering: its own request timeout (504) comes first. */
  responseTimeoutMs: number;
  clientAddress(req: IncomingMessage): string;
  /** The owner could not be reached: the caller forgets it and asks again; true the first time (logged once). */
  unreachable(target: OwnerTarget): boolean;
  log: InstanceLog;
}

/** Seconds a client is told to wait when a placed API's owner cannot be reached. */
export const PLACEMENT_RETRY_AFTER_S = 1;

/** 503 with `retry-after`: no instance may serve the placed API right now. The reason stays in the error (5xx messages are not sent). */
export function refusePlacement(res: ServerResponse, reason: string): void {
  if (res.headersSent || res.destroyed) return;
  const refusal = Errors.placementUnavailable(reason);
  sendFailure(res, clientError(refusal), { 'retry-after': String(PLACEMENT_RETRY_AFTER_S) });
}

/**
 * Sends a request for a placed API to its owner's internal port as it came (method, target, headers
 * with Host, the body streamed both ways), with the cluster secret, the client's address and the
 * epoch the forwarder knows. The owner runs the API and checks the body limit and the timeouts.
 */
export class OwnerForwarder {
  private readonly agent = new Agent({ keepAlive: true, keepAliveMsecs: 1_000, maxSockets: 512 });

  constructor(private readonly options: ForwarderOptions) {}

  forward(req: IncomingMessage, res: ServerResponse, target: OwnerTarget): void {
    const { options } = this;
    const url = new URL(target.url);
    const headers = passedOn(req.rawHeaders);
    headers[CLUSTER_SECRET_HEADER] = options.secret;
    headers[CLIENT_ADDRESS_HEADER] = options.clientAddress(req);
    headers[PLACEMENT_EPOCH_HEADER] = String(target.epoch);
    const out = request({
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port,
      method: req.method,
      path: req.url,
      headers,
      agent: this.agent,
      setHost: false,
    });
    let answered = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      out.destroy(new Error('the owner did not answer in time'));
    }, options.responseTimeoutMs);
    out.on('response', (answer) => {
      clearTimeout(timer);
      answered = true;
      try {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, passedOn(answer.rawHeaders));
      } catch {
        answer.destroy();
        res.destroy();
        return;
      }
      answer.on('error', () => res.destroy());
      answer.pipe(res);
    });
    out.on('error', (error) => {
      clearTimeout(timer);
      // Once the owner answers, the answer's own stream says how it ends (an owner may answer 413
      // and close while the body is still being sent).
      if (answered) return;
      if (res.headersSent || res.destroyed) return void res.destroy();
      if (timedOut) return sendFailure(res, Errors.timeout());
      // Refused, reset before an answer: the owner is gone or going. Nothing of it ran if the
      // connection was refused; either way the client may retry.
      if (options.unreachable(target))
        options.log.info(
          { owner: target.owner, epoch: target.epoch, err: error.message },
          'placement: the owner of an API did not answer; its request was refused with 503',
        );
      refusePlacement(res, `the instance that owns the API (${target.owner}) cannot be reached`);
    });
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  }

  close(): void {
    this.agent.destroy();
  }
}
