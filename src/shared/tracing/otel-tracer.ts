/**
 * Tracing on: spans made with the OpenTelemetry SDK and exported over OTLP/HTTP (JSON) by a batch
 * processor whose queue is bounded, so a slow or dead collector costs dropped spans, never a
 * request. Loaded by an actor thread only when tracing is on (see tracing-config.ts). Parents are
 * passed explicitly: no context manager, no async hooks.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type Tracer as OtelTracer,
} from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { formatTraceparent, type TraceParent } from './traceparent.js';
import type { SpanAttributes, SpanAttributeValue, TraceSpan, Tracer } from './trace-span.js';
import type { TracingConfig } from './tracing-config.js';

/** How long a stopping thread waits for its last spans to be exported. */
const CLOSE_WAIT_MS = 2_000;
const KINDS = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT } as const;

class OtelSpan implements TraceSpan {
  private sums: Map<string, number> | undefined;

  constructor(
    private readonly tracer: OtelTracer,
    private readonly span: Span,
  ) {}

  child(name: string, kind: 'internal' | 'client', attributes: SpanAttributes): TraceSpan {
    return new OtelSpan(
      this.tracer,
      this.tracer.startSpan(name, { kind: KINDS[kind], attributes }, trace.setSpan(ROOT_CONTEXT, this.span)),
    );
  }

  set(key: string, value: SpanAttributeValue): void {
    this.span.setAttribute(key, value);
  }

  add(key: string, amount: number): void {
    this.sums ??= new Map();
    const sum = (this.sums.get(key) ?? 0) + amount;
    this.sums.set(key, sum);
    this.span.setAttribute(key, sum);
  }

  fail(message: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(): void {
    this.span.end();
  }

  propagation(): { traceparent: string; tracestate: string | undefined } {
    const context = this.span.spanContext();
    const state = context.traceState?.serialize();
    return {
      traceparent: formatTraceparent(context.traceId, context.spanId, context.traceFlags),
      tracestate: state === '' ? undefined : state,
    };
  }
}

/** OTEL_TRACES_SAMPLER's sampler (the SDK no longer reads the variable itself). */
function sampler(config: TracingConfig): Sampler {
  const parentBased = config.sampler.startsWith('parentbased_');
  const rule = parentBased ? config.sampler.slice('parentbased_'.length) : config.sampler;
  const root =
    rule === 'always_off'
      ? new AlwaysOffSampler()
      : rule === 'traceidratio'
        ? new TraceIdRatioBasedSampler(config.samplerRatio)
        : new AlwaysOnSampler();
  return parentBased ? new ParentBasedSampler({ root }) : root;
}

/** The thread's tracer: `attributes` describe the process (its cell), the rest is per span. */
export function openTracer(config: TracingConfig, attributes: SpanAttributes): Tracer {
  const resource = resourceFromAttributes({ 'service.name': config.serviceName, ...attributes }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const processor = new BatchSpanProcessor({
    exporter: new OTLPTraceExporter(),
    scheduledDelayMillis: config.scheduleDelayMs,
    maxQueueSize: config.maxQueueSize,
    maxExportBatchSize: config.maxExportBatchSize,
    exportTimeoutMillis: config.exportTimeoutMs,
  });
  const provider = new TracerProvider({ resource, spanProcessors: [processor], sampler: sampler(config) });
  const tracer = provider.getTracer('anvil');
  return {
    startRequest(
      name: string,
      parent: TraceParent | null,
      startedAt: number,
      spanAttributes: SpanAttributes,
    ): TraceSpan {
      const context =
        parent === null
          ? ROOT_CONTEXT
          : trace.setSpanContext(ROOT_CONTEXT, {
              traceId: parent.traceId,
              spanId: parent.spanId,
              traceFlags: parent.flags,
              isRemote: true,
              traceState: parent.tracestate === undefined ? undefined : new TraceState(parent.tracestate),
            });
      // A Date, not a number: a number before the thread's time origin would be read as relative.
      const span = tracer.startSpan(
        name,
        { kind: SpanKind.SERVER, attributes: spanAttributes, startTime: new Date(startedAt) },
        context,
      );
      return new OtelSpan(tracer, span);
    },
    async close(): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
      await Promise.race([provider.shutdown().catch(() => {}), waited]);
      clearTimeout(timer);
    },
  };
}
