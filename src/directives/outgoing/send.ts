/**
 * Outgoing requests of Pull, Push and Http: to this instance's own base URL they go over the
 * in-process bus (no socket, private APIs allowed, hop counted); anywhere else over HTTP through
 * the egress policy, never following redirects. Every outgoing request carries the correlation id,
 * and the trace context (see shared/tracing/outgoing-trace.ts).
 */
import { performance } from 'node:perf_hooks';
import type { request as UndiciRequest } from 'undici';
import type { DirectiveContext } from '../../engine/context.js';
import { egressAgent, checkLiteralHost, undici } from '../egress/egress-agent.js';
import { egressPolicy } from '../egress/egress-policy.js';
import { AnvilError, Errors, QuotaError } from '../../shared/errors.js';
import type { BusResponse } from '../../shared/protocol/bus-calls.js';
import { endHop, startHop } from '../../shared/tracing/outgoing-trace.js';

export interface OutgoingRequest {
  /** Base URL: scheme, host and port (`$.memory.anvil-localhost` for the bus). */
  host: string;
  /** Path, starting with `/` (for the bus: `/<api key>/…`). */
  path: string;
  verb: string;
  /** Query string without `?`. */
  query: string;
  headers: Record<string, string | string[]>;
  body: Buffer | string | null;
  timeoutMs: number;
  connectTimeoutMs?: number;
}

export interface UpstreamResponse {
  status: number;
  /** Flat [name, value, …], names lower-case. */
  headers: string[];
  body: Buffer;
}

/** Responses larger than this are refused (they are held in memory on their way). */
export const UPSTREAM_BODY_LIMIT = 10 * 1024 * 1024;
const CORRELATION = 'x-correlation-id';

export async function send(ctx: DirectiveContext, request: OutgoingRequest): Promise<UpstreamResponse> {
  const headers = { ...request.headers };
  const correlationId = ctx.memory.get('correlationId');
  if (typeof correlationId === 'string' && headers[CORRELATION] === undefined) headers[CORRELATION] = correlationId;
  const viaBus = sameOrigin(request.host, ctx.api.localBaseUrl);
  const hop = startHop(
    ctx.traceSpan,
    ctx.request.headers,
    { verb: request.verb, host: request.host, path: request.path, viaBus },
    headers,
  );
  if (hop === null) return viaBus ? bus(ctx, request, headers) : timedNetwork(ctx, request, headers);
  let response: UpstreamResponse;
  try {
    response = viaBus ? await bus(ctx, request, headers) : await timedNetwork(ctx, request, headers);
  } catch (error) {
    endHop(hop, null, error);
    throw error;
  }
  endHop(hop, response.status);
  return response;
}

async function bus(
  ctx: DirectiveContext,
  request: OutgoingRequest,
  headers: Record<string, string | string[]>,
): Promise<UpstreamResponse> {
  const rawHeaders: string[] = [];
  for (const [name, value] of Object.entries(headers))
    for (const v of Array.isArray(value) ? value : [value]) rawHeaders.push(name, v);
  const body = request.body === null ? null : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body);
  let budget: number;
  try {
    budget = ctx.busCalls.take(request.path);
  } catch (error) {
    // Over the request's share of bus calls: refused (508) before anything is sent, and counted.
    if (error instanceof QuotaError) ctx.api.refusals.add(error.quota);
    throw error;
  }
  let response: BusResponse;
  try {
    response = await ctx.api.callLocal(
      {
        verb: request.verb.toUpperCase(),
        path: request.path,
        rawQuery: request.query,
        rawHeaders,
        body,
        hop: ctx.request.hop,
        budget,
      },
      request.timeoutMs,
    );
  } catch (error) {
    // A call that failed (a timeout) keeps its lease spent: its callee may still be at work.
    ctx.busCalls.settle(budget, 0);
    throw error;
  }
  ctx.busCalls.settle(budget, response.budgetLeft);
  return {
    status: response.status,
    headers: response.headers.map((h, i) => (i % 2 === 0 ? h.toLowerCase() : h)),
    body: response.body,
  };
}

async function timedNetwork(
  ctx: DirectiveContext,
  request: OutgoingRequest,
  headers: Record<string, string | string[]>,
): Promise<UpstreamResponse> {
  const startedAt = performance.now();
  try {
    return await network(ctx, request, headers);
  } finally {
    ctx.api.outgoing.observe((performance.now() - startedAt) / 1000);
  }
}

async function network(
  ctx: DirectiveContext,
  request: OutgoingRequest,
  headers: Record<string, string | string[]>,
): Promise<UpstreamResponse> {
  let url: URL;
  try {
    url = new URL(request.path + (request.query ? `?${request.query}` : ''), request.host);
  } catch {
    throw Errors.upstreamBadUrl(request.host, request.path);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw Errors.upstreamBadProtocol(url.protocol);
  const policy = ctx.api.resource('egress-policy', () => egressPolicy(ctx.api.egressAllow ?? undefined));
  // One agent (connection pool) per connect timeout in use: the timeout is a property of the pool.
  const connectTimeoutMs = request.connectTimeoutMs ?? 5_000;
  const agent =
    ctx.api.upstreams ??
    ctx.api.resource(`egress-agent:${connectTimeoutMs}`, () => egressAgent(policy, { connectTimeoutMs }));
  checkLiteralHost(policy, url.hostname);
  delete headers.host;
  // headersTimeout and bodyTimeout are idle timers (an upstream sending a byte a second keeps them
  // content): the deadline bounds the whole exchange, as the directive's `timeout` says.
  const deadline = AbortSignal.timeout(request.timeoutMs);
  try {
    const response = await undici().request(url, {
      signal: deadline,
      method: request.verb.toUpperCase() as 'GET',
      headers,
      body: request.body ?? undefined,
      dispatcher: agent,
      headersTimeout: request.timeoutMs,
      bodyTimeout: request.timeoutMs,
      maxRedirections: 0,
    } as Parameters<typeof UndiciRequest>[1]);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > UPSTREAM_BODY_LIMIT) {
        response.body.destroy();
        throw Errors.upstreamTooLarge(UPSTREAM_BODY_LIMIT);
      }
      chunks.push(chunk as Buffer);
    }
    const flat: string[] = [];
    for (const [name, value] of Object.entries(response.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) flat.push(name.toLowerCase(), v);
    }
    return { status: response.statusCode, headers: flat, body: Buffer.concat(chunks, size) };
  } catch (error) {
    if (error instanceof AnvilError) throw error;
    if (deadline.aborted) throw Errors.upstreamTimeout(url.origin, request.timeoutMs);
    const code = (error as { code?: string }).code ?? '';
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof AnvilError) throw cause;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      throw Errors.upstreamTimeout(url.origin, request.timeoutMs);
    }
    throw Errors.upstreamFailed(url.origin, (error as Error).message);
  }
}

/** True when `host` names this instance (scheme, host and port equal; a trailing slash ignored). */
function sameOrigin(host: string, local: string): boolean {
  return host.replace(/\/+$/, '').toLowerCase() === local.replace(/\/+$/, '').toLowerCase();
}
