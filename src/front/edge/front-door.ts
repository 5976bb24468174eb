import type { IncomingMessage, ServerResponse } from 'node:http';
import { readResponse, type RoutedRequest } from '../../shared/protocol/requests.js';
import type { BodyBytes } from '../../shared/protocol/frames.js';
import { clientError, Errors } from '../../shared/errors.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { ApiDirectory, ApiEntry } from '../scheduling/api-directory.js';
import { sendFailure, writeApiResponse } from './http-response.js';
import type { ResponseBuffer } from './response-buffer.js';
import type { Dispatcher } from '../scheduling/dispatcher.js';
import { readBody } from '../../shared/http/body.js';
import { scanRequestHead } from './request-head.js';
import { authenticateAdmin, hostOf } from './vhost-auth.js';

const PLATFORM_SEGMENT = '/anvil';

export interface FrontDoorOptions {
  bodyLimit: number;
}

export interface FrontDoorDeps {
  directory: ApiDirectory;
  dispatcher: Dispatcher;
  /** `/anvil` and `/anvil/…` on the admin host: the admin router (front/admin), which checks credentials as each endpoint says. */
  admin(req: IncomingMessage, res: ServerResponse, path: string, rawQuery: string): Promise<void>;
  /** Large response bodies held for clients, under the instance's cap. */
  responses: ResponseBuffer;
  log: InstanceLog;
  /** The client's address: the PROXY header's or the peer's, then a trusted proxy's x-forwarded-for. */
  clientAddress(req: IncomingMessage): string;
  /**
   * Cluster mode: who serves an API request. It calls `serveHere` when this instance does, or
   * answers itself (forwarded to the API's owner instance, refused). Absent: always here.
   */
  place?(req: IncomingMessage, res: ServerResponse, api: ApiEntry, serveHere: () => void): void;
}

/**
 * The router's request handler (SPEC §6): Host → virtual host; on the admin host credentials, the
 * management API and private calls; on a public host public APIs only. API requests become jobs
 * for the API's actor; the router never runs API code.
 */
export class FrontDoor {
  constructor(
    private readonly deps: FrontDoorDeps,
    private readonly options: FrontDoorOptions,
  ) {}

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    try {
      this.route(req, res);
    } catch (error) {
      this.fail(res, error);
    }
  };

  private fail(res: ServerResponse, error: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendFailure(res, clientError(error));
  }

  /** Synchronous on the common path (no body): no promise per request. */
  private route(req: IncomingMessage, res: ServerResponse): void {
    const head = scanRequestHead(req.rawHeaders);
    if (head.problem !== null) {
      this.deps.log.info(
        { ip: this.deps.clientAddress(req), verb: req.method, reason: head.problem },
        'request refused: 400',
      );
      // What else this client sends on the connection is not trusted either.
      return sendFailure(res, Errors.badRequestHead(head.problem), { connection: 'close' });
    }
    const vhost = this.deps.directory.host(hostOf(head.host));
    if (vhost === undefined) return sendFailure(res, Errors.notFound());
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const rawQuery = queryAt < 0 ? '' : url.slice(queryAt + 1);
    if (!path.startsWith('/')) return sendFailure(res, Errors.badTarget());

    if (vhost.kind === 'public') {
      const [key, endpointPath] = vhost.path !== null ? [vhost.path.slice(1), path] : splitKey(path);
      const api = key === '' ? undefined : this.deps.directory.api(vhost.name, key);
      if (api === undefined || !api.record.active || !api.record.public) return sendFailure(res, Errors.notFound());
      return this.forward(req, res, head.hasBody, api, endpointPath, rawQuery);
    }

    if (path === PLATFORM_SEGMENT || path.startsWith(`${PLATFORM_SEGMENT}/`)) {
      this.deps.admin(req, res, path, rawQuery).catch((error: unknown) => this.fail(res, error));
      return;
    }
    const host = authenticateAdmin(req, this.deps.directory);
    if (host === null) return sendFailure(res, Errors.unauthorized());
    const [key, endpointPath] = splitKey(path);
    const api = key === '' ? undefined : this.deps.directory.api(host.name, key);
    if (api === undefined || !api.record.active) return sendFailure(res, Errors.notFound());
    return this.forward(req, res, head.hasBody, api, endpointPath, rawQuery);
  }

  private forward(
    req: IncomingMessage,
    res: ServerResponse,
    hasBody: boolean,
    api: ApiEntry,
    path: string,
    rawQuery: string,
  ): void {
    const place = this.deps.place;
    if (place === undefined) return this.serve(req, res, hasBody, api, path, rawQuery);
    place(req, res, api, () => {
      try {
        this.serve(req, res, hasBody, api, path, rawQuery);
      } catch (error) {
        this.fail(res, error);
      }
    });
  }

  private serve(
    req: IncomingMessage,
    res: ServerResponse,
    hasBody: boolean,
    api: ApiEntry,
    path: string,
    rawQuery: string,
  ): void {
    const receivedAt = Date.now();
    if (!hasBody) return this.dispatch(req, res, api, path, rawQuery, null, receivedAt);
    readBody(req, this.options.bodyLimit).then(
      (body) => this.dispatch(req, res, api, path, rawQuery, body, receivedAt),
      (error: unknown) => this.fail(res, error),
    );
  }

  private dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    api: ApiEntry,
    path: string,
    rawQuery: string,
    body: BodyBytes,
    receivedAt: number,
  ): void {
    const request: RoutedRequest = {
      id: this.deps.dispatcher.nextId(),
      verb: req.method ?? 'GET',
      path,
      rawQuery,
      rawHeaders: req.rawHeaders,
      body,
      ip: this.deps.clientAddress(req),
      hop: 0,
      budget: this.deps.dispatcher.busCallsPerRequest,
      viaBus: false,
      receivedAt,
    };
    this.deps.dispatcher.submit(api.spec, request, readResponse, (outcome) => {
      if (res.writableEnded || res.destroyed) return;
      if (outcome.ok) {
        const refused = writeApiResponse(res, outcome.response, this.deps.responses, api.spec, request.id);
        if (refused !== null)
          this.deps.log.warn(
            { correlationId: request.id, host: api.spec.host, api: api.spec.key, reason: refused },
            'API response refused: 502',
          );
      } else {
        const headers: Record<string, string> = { 'x-correlation-id': request.id };
        if (outcome.retryAfter !== undefined) headers['retry-after'] = String(outcome.retryAfter);
        sendFailure(res, outcome.error, headers);
      }
    });
  }
}

/** `/users/42` → [`users`, `/42`]; `/users` → [`users`, `/`]. */
function splitKey(path: string): [string, string] {
  const slash = path.indexOf('/', 1);
  if (slash < 0) return [path.slice(1), '/'];
  return [path.slice(1, slash), path.slice(slash)];
}
