/**
 * The spans the engine makes when tracing is on: one per request (named `<VERB> <route template>`,
 * from the router's receipt of the request to the response handed back) and one per entry it runs
 * (named by the entry's label). The engine calls these only after checking that its tracer is set.
 */
import type { EngineRequest } from '../protocol/requests.js';
import { findTraceParent } from './traceparent.js';
import type { TraceSpan, Tracer } from './trace-span.js';

/** Who serves the request: the API and its release. */
export interface SpanApi {
  readonly key: string;
  readonly host: string;
  readonly release: string;
}

/**
 * The request's span, a child of the span its `traceparent` names (an invalid one is ignored: a new
 * trace starts). `route` is the endpoint's template (`/users/{id}`), null when none matched. A job's
 * run starts a trace of its own: what queued it has answered long ago.
 */
export function startRequestSpan(
  tracer: Tracer,
  request: EngineRequest,
  api: SpanApi,
  route: string | null,
  job: boolean,
): TraceSpan {
  const verb = request.verb.toUpperCase();
  const span = tracer.startRequest(
    route === null ? verb : `${verb} ${route}`,
    job ? null : findTraceParent(request.rawHeaders),
    request.receivedAt,
    {
      'anvil.api': api.key,
      'anvil.host': api.host,
      'anvil.release': api.release,
      'anvil.correlation_id': request.id,
      'anvil.bus_hops': request.hop,
      'http.request.method': verb,
      'url.path': request.path,
    },
  );
  if (route !== null) span.set('http.route', route);
  if (request.viaBus) span.set('anvil.via_bus', true);
  if (job) span.set('anvil.job', true);
  return span;
}

/** Ends the request's span with its status; a 5xx marks it failed (the error's message when there is one). */
export function endRequestSpan(span: TraceSpan, status: number, error: string | undefined): void {
  span.set('http.response.status_code', status);
  if (status >= 500) span.fail(error ?? `status ${status}`);
  span.end();
}

/** A request no endpoint answered (404, OPTIONS): its span starts and ends at once. */
export function traceUnrouted(tracer: Tracer, request: EngineRequest, api: SpanApi, status: number): void {
  endRequestSpan(startRequestSpan(tracer, request, api, null, false), status, undefined);
}

/** The span of one entry: named by its label, with its directive and the pass it runs in. */
export function startEntrySpan(
  parent: TraceSpan,
  label: string,
  directive: string,
  pass: 'main' | 'after',
  api: SpanApi,
): TraceSpan {
  return parent.child(label, 'internal', {
    'anvil.directive': directive,
    'anvil.entry': label,
    'anvil.pass': pass,
    'anvil.api': api.key,
  });
}

/** Ends an entry's span; a thrown error marks it failed with its status. */
export function endEntrySpan(span: TraceSpan, error: { status: number; message: string } | undefined): void {
  if (error !== undefined) {
    span.set('anvil.error.status', error.status);
    span.fail(error.message);
  }
  span.end();
}
