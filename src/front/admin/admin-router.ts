import type { IncomingMessage, ServerResponse } from 'node:http';
import { AnvilError, clientError, Errors } from '../../shared/errors.js';
import { API_KEY } from '../../deploy/api-yaml/api-key.js';
import type { PublicHost } from '../../deploy/registry/registry.js';
import { sendFailure, sendJson } from '../edge/http-response.js';
import { ADMIN_ENDPOINTS, type AdminEndpoint, type EndpointId } from './admin-endpoints.js';

/** What a handler is given: `params` holds the path's `:name` parts (and `*`), `query` the query string. */
export interface OpenCall {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
}

/** A call on an endpoint that takes a public host's credentials: the host they named. */
export interface HostCall extends OpenCall {
  host: PublicHost;
}

/** A view to send as JSON (200 unless said), or a bodiless status (204); a handler that wrote the response itself returns nothing. */
export interface AdminAnswer {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Answer = AdminAnswer | void | Promise<AdminAnswer | void>;

/** One handler per endpoint: those with `auth: 'host'` get the authenticated host. */
export type AdminHandlers = {
  [E in AdminEndpoint as E['id']]: E['auth'] extends 'host' ? (call: HostCall) => Answer : (call: OpenCall) => Answer;
};

export interface AdminRouterDeps {
  handlers: AdminHandlers;
  /** The public host the request's credentials name, or null (→ 401). */
  authenticate(req: IncomingMessage): PublicHost | null;
}

interface CompiledEndpoint {
  id: EndpointId;
  method: string;
  auth: AdminEndpoint['auth'];
  segments: string[];
}

const COMPILED: CompiledEndpoint[] = ADMIN_ENDPOINTS.map(({ id, method, auth, path }) => ({
  id,
  method,
  auth,
  segments: path.split('/').slice(1),
}));

/**
 * The admin host's `/anvil/…` requests: the endpoint table (admin-endpoints.ts) matched in order,
 * credentials checked as the endpoint says, then its handler. A handler answers a view or throws a
 * catalogue error; both are written here (`{"error", "code"}` for errors). A path no endpoint has
 * is a 401 without credentials (nothing is told of the admin host before), else a 404; a known
 * path with another method a 405 naming the allowed ones.
 */
export class AdminRouter {
  constructor(private readonly deps: AdminRouterDeps) {}

  async handle(req: IncomingMessage, res: ServerResponse, path: string, rawQuery: string): Promise<void> {
    try {
      const answer = await this.route(req, res, path, rawQuery);
      if (answer !== undefined) writeAnswer(res, answer);
      else if (!res.headersSent) throw new Error(`the admin handler for ${path} answered nothing`);
    } catch (error) {
      if (res.headersSent) res.destroy();
      else sendFailure(res, operatorError(error));
    }
  }

  private route(req: IncomingMessage, res: ServerResponse, path: string, rawQuery: string): Answer {
    const parts = path.split('/').slice(1);
    const matches = COMPILED.map((endpoint) => ({ endpoint, params: matchPath(endpoint.segments, parts) })).filter(
      (m) => m.params !== null,
    );
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    const open = matches.length > 0 && matches.every((m) => m.endpoint.auth !== 'host');
    const host = open ? null : this.deps.authenticate(req);
    if (!open && host === null) throw Errors.unauthorized();
    if (matches.length === 0) throw Errors.notFound();
    const chosen = matches.find((m) => m.endpoint.method === method);
    if (chosen === undefined) {
      const allow = [...new Set(matches.map((m) => m.endpoint.method))];
      if (allow.includes('GET')) allow.push('HEAD');
      return sendFailure(res, Errors.methodNotAllowed(), { allow: allow.join(', ') });
    }
    const params = chosen.params!;
    if (params.key !== undefined && !API_KEY.test(params.key)) throw Errors.unknownApi(params.key.slice(0, 100));
    const call: OpenCall = { req, res, params, query: new URLSearchParams(rawQuery) };
    const handler = this.deps.handlers[chosen.endpoint.id] as (call: OpenCall | HostCall) => Answer;
    return handler(host === null ? call : { ...call, host });
  }
}

/** `:name` takes one segment, a last `*` the rest (possibly empty); null when the path is another. */
function matchPath(pattern: string[], parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    if (want === '*') {
      params['*'] = parts.slice(i).join('/');
      return i < parts.length ? params : null;
    }
    const part = parts[i];
    if (part === undefined) return null;
    if (want.startsWith(':')) {
      if (part === '') return null;
      params[want.slice(1)] = decodeURIComponent(part);
    } else if (want !== part) return null;
  }
  return parts.length === pattern.length ? params : null;
}

function writeAnswer(res: ServerResponse, answer: AdminAnswer): void {
  const status = answer.status ?? 200;
  if (answer.body === undefined) res.writeHead(status, answer.headers).end();
  else sendJson(res, status, answer.body, answer.headers);
}

/** Server errors said in full on the admin host: what an operator acts on (the APIs keep serving meanwhile). */
const SAID_IN_FULL = new Set([Errors.controlPlaneUnavailable.code, Errors.jobQueueUnreadable.code]);

/** A 4xx as it is; a 5xx as its status text (`clientError`) unless it is one an operator acts on. */
function operatorError(error: unknown): AnvilError {
  return error instanceof AnvilError && (error.status < 500 || SAID_IN_FULL.has(error.code))
    ? error
    : clientError(error);
}
