/**
 * What the engine and the outgoing requests see of tracing: spans as a small interface of our own,
 * so that nothing outside src/shared/tracing/otel-tracer.ts loads OpenTelemetry (it is loaded only when
 * tracing is on; off, the runtime's tracer is null and no span exists).
 */
import type { TraceParent } from './traceparent.js';

export type SpanAttributeValue = string | number | boolean;
export type SpanAttributes = Record<string, SpanAttributeValue>;

export interface TraceSpan {
  /** A span under this one: `internal` for a directive, `client` for an outgoing call. */
  child(name: string, kind: 'internal' | 'client', attributes: SpanAttributes): TraceSpan;
  set(key: string, value: SpanAttributeValue): void;
  /** Adds `amount` to a numeric attribute (0 when not set yet). */
  add(key: string, amount: number): void;
  /** Marks the span failed, with what went wrong. */
  fail(message: string): void;
  end(): void;
  /** The headers that make this span the parent of whoever receives them. */
  propagation(): { traceparent: string; tracestate: string | undefined };
}

export interface Tracer {
  /**
   * A request's span (kind server): a child of `parent`, the caller's span its traceparent named,
   * or the root of a new trace when there is none. `startedAt`: when the router received it.
   */
  startRequest(name: string, parent: TraceParent | null, startedAt: number, attributes: SpanAttributes): TraceSpan;
  /** Exports what is queued (for a moment at most) and stops. */
  close(): Promise<void>;
}
