/**
 * Trace context on outgoing requests (Pull, Push, Http, LocalCall, Event; over HTTP or the bus).
 * Tracing on: each call is a span of its own (kind client) under the running entry's, and the
 * receiver gets a traceparent naming that span, replacing any the headers had. Tracing off: no
 * span; the traceparent and tracestate the client sent, when valid, go on unchanged (W3C's rule for
 * a system that does not trace), unless the request already carries a traceparent of its own.
 */
import { findTraceParent, formatTraceparent } from './traceparent.js';
import type { TraceSpan } from './trace-span.js';

const TRACEPARENT = 'traceparent';
const TRACESTATE = 'tracestate';

export interface HopTarget {
  verb: string;
  /** Base URL (HTTP), or this instance's for the bus. */
  host: string;
  path: string;
  viaBus: boolean;
}

/**
 * Sets the trace headers of an outgoing request and returns its span (null: tracing off).
 * `parent`: the running entry's span; `incoming`: the request's headers as the client sent them.
 */
export function startHop(
  parent: TraceSpan | null,
  incoming: readonly string[],
  target: HopTarget,
  headers: Record<string, string | string[]>,
): TraceSpan | null {
  if (parent === null) {
    passOn(incoming, headers);
    return null;
  }
  const verb = target.verb.toUpperCase();
  let span: TraceSpan;
  if (target.viaBus) {
    const api = target.path.split('/')[1] ?? '';
    span = parent.child(`${verb} /${api}`, 'client', {
      'http.request.method': verb,
      'url.path': target.path,
      'anvil.bus': true,
      'anvil.target_api': api,
    });
  } else {
    span = parent.child(`${verb} ${target.host.replace(/\/+$/, '')}`, 'client', {
      'http.request.method': verb,
      'url.full': joinUrl(target.host, target.path),
    });
  }
  removeTraceHeaders(headers);
  const { traceparent, tracestate } = span.propagation();
  headers[TRACEPARENT] = traceparent;
  if (tracestate !== undefined) headers[TRACESTATE] = tracestate;
  return span;
}

/** Ends a call's span: its status (a 5xx marks it failed), or the error that ended it. */
export function endHop(span: TraceSpan, status: number | null, error?: unknown): void {
  if (status !== null) {
    span.set('http.response.status_code', status);
    if (status >= 500) span.fail(`status ${status}`);
  } else {
    span.fail(error instanceof Error ? error.message : String(error));
  }
  span.end();
}

function passOn(incoming: readonly string[], headers: Record<string, string | string[]>): void {
  for (const name of Object.keys(headers)) if (name.toLowerCase() === TRACEPARENT) return;
  const parent = findTraceParent(incoming);
  if (parent === null) return;
  removeTraceHeaders(headers);
  headers[TRACEPARENT] = formatTraceparent(parent.traceId, parent.spanId, parent.flags);
  if (parent.tracestate !== undefined) headers[TRACESTATE] = parent.tracestate;
}

function removeTraceHeaders(headers: Record<string, string | string[]>): void {
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (lower === TRACEPARENT || lower === TRACESTATE) delete headers[name];
  }
}

/** `https://api.example.com` + `/rates` without the query (it may carry secrets). */
function joinUrl(host: string, path: string): string {
  return `${host.replace(/\/+$/, '')}${path}`;
}
