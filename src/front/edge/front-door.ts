import type { IncomingMessage, ServerResponse } from 'node:http';
import { readResponse, type RoutedRequest } from '../../shared/protocol/requests.js';
import type { BodyBytes } from '../../shared/protocol/frames.js';
import { AnvilError, publicMessage } from '../../shared/errors.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { PublicHost } from '../../deploy/registry/registry.js';
import type { ApiDirectory, ApiEntry } from '../scheduling/api-directory.js';
import { sendError, sendJson, writeApiResponse } from './http-response.js';
import type { ResponseBuffer } from './response-buffer.js';
import type { Dispatcher } from '../scheduling/dispatcher.js';
import { readBody } from '../../shared/http/body.js';
import { scanRequestHead } from './request-head.js';
import { authenticateAdmin, hostOf } from './vhost-auth.js';
import { CONSOLE_PATH } from './console-files.js';

const PLATFORM_SEGMENT = '/anvil';

export interface FrontDoorOptions {
  bodyLimit: number;
}

export interface FrontDoorDeps {
  directory: ApiDirectory;
  dispatcher: Dispatcher;
  /** `/anvil/...` on the admin host, after authentication; `path` is the part after `/anvil`. */
  management(req: IncomingMessage, res: ServerResponse, path: string, host: PublicHost): Promise<void>;
  /** True once the instance serves (cells up), false while starting or draining. */
  ready(): boolean;
  /** Large response bodies held for clients, under the instance's cap. */
  responses: ResponseBuffer;
  /** The operator console's static files under `/anvil/console` on the admin host: no credentials (they hold no data). */
  console(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
  /** `GET /anvil/metrics` on the admin host (it checks its own access). */
  metrics(req: IncomingMessage, res: ServerResponse): Promise<void>;
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
    const status = error instanceof AnvilError ? error.status : 500;
    // As everywhere: a status >= 500 is sent as its bare text (a registry refusal of a deploy, say).
    const message = error instanceof AnvilError ? publicMessage(status, error.message, false, error.code) : 'Internal Server Error';
    sendError(res, status, message);
  }

  /** Synchronous on the common path (no body): no promise per request. */
  private route(req: IncomingMessage, res: ServerResponse): void {
    const head = scanRequestHead(req.rawHeaders);
    if (head.problem !== null) {
      this.deps.log.info({ ip: this.deps.clientAddress(req), verb: req.method, reason: head.problem }, 'request refused: 400');
      // What else this client sends on the connection is not trusted either.
      return sendError(res, 400, head.problem, { connection: 'close' });
    }
    const vhost = this.deps.directory.host(hostOf(head.host));
    if (vhost === undefined) return sendError(res, 404, 'Not Found');
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const rawQuery = queryAt < 0 ? '' : url.slice(queryAt + 1);
    if (!path.startsWith('/')) return sendError(res, 400, 'Bad Request: the request target must be a path');

    if (vhost.kind === 'public') {
      const [key, endpointPath] = vhost.path !== null ? [vhost.path.slice(1), path] : splitKey(path);
      const api = key === '' ? undefined : this.deps.directory.api(vhost.name, key);
      if (api === undefined || !api.record.active || !api.record.public) return sendError(res, 404, 'Not Found');
      return this.forward(req, res, head.hasBody, api, endpointPath, rawQuery);
    }

    if (path === `${PLATFORM_SEGMENT}/health`) {
      const ready = this.deps.ready();
      return sendJson(res, ready ? 200 : 503, { status: ready ? 'ok' : 'unavailable' });
    }
    if (path === `${PLATFORM_SEGMENT}/metrics`) {
      this.deps.metrics(req, res).catch((error: unknown) => this.fail(res, error));
      return;
    }
    if (path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`)) {
      this.deps.console(req, res, path).catch((error: unknown) => this.fail(res, error));
      return;
    }
    const host = authenticateAdmin(req, this.deps.directory);
    if (host === null) return sendError(res, 401, 'Unauthorized');
    if (path === PLATFORM_SEGMENT || path.startsWith(`${PLATFORM_SEGMENT}/`)) {
      this.deps.management(req, res, path.slice(PLATFORM_SEGMENT.length), host).catch((error: unknown) => this.fail(res, error));
      return;
    }
    const [key, endpointPath] = splitKey(path);
    const api = key === '' ? undefined : this.deps.directory.api(host.name, key);
    if (api === undefined || !api.record.active) return sendError(res, 404, 'Not Found');
    return this.forward(req, res, head.hasBody, api, endpointPath, rawQuery);
  }

  private forward(req: IncomingMessage, res: ServerResponse, hasBody: boolean, api: ApiEntry, path: string, rawQuery: string): void {
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

  private serve(req: IncomingMessage, res: ServerResponse, hasBody: boolean, api: ApiEntry, path: string, rawQuery: string): void {
    const receivedAt = Date.now();
    if (!hasBody) return this.dispatch(req, res, api, path, rawQuery, null, receivedAt);
    readBody(req, this.options.bodyLimit).then(
      (body) => this.dispatch(req, res, api, path, rawQuery, body, receivedAt),
      (error: unknown) => this.fail(res, error),
    );
  }

  private dispatch(req: IncomingMessage, res: ServerResponse, api: ApiEntry, path: string, rawQuery: string, body: BodyBytes, receivedAt: number): void {
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
        if (refused !== null) this.deps.log.warn({ correlationId: request.id, host: api.spec.host, api: api.spec.key, reason: refused }, 'API response refused: 502');
      } else {
        const headers: Record<string, string> = { 'x-correlation-id': request.id };
        if (outcome.retryAfter !== undefined) headers['retry-after'] = String(outcome.retryAfter);
        sendError(res, outcome.error.status, outcome.error.message, headers);
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

