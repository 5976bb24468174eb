import { describe, expect, it } from 'vitest';
import {
  findTraceParent,
  formatTraceparent,
  parseTraceparent,
  validTracestate,
} from '../../../src/shared/tracing/traceparent.js';
import { threadEnvironment, tracingConfig } from '../../../src/shared/tracing/tracing-config.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent (W3C Trace Context)', () => {
  it('reads a valid version-00 header', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      flags: 1,
      tracestate: undefined,
    });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.flags).toBe(0);
  });

  it('reads a later version by its first four fields', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-whatever`)?.traceId).toBe(TRACE);
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01`)?.spanId).toBe(SPAN);
  });

  it.each([
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with more after it', `00-${TRACE}-${SPAN}-01-extra`],
    ['a later version without a dash after the flags', `01-${TRACE}-${SPAN}-01x`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['wrong separators', `00_${TRACE}_${SPAN}_01`],
    ['non-hex flags', `00-${TRACE}-${SPAN}-0g`],
    ['nothing', ''],
  ])('refuses %s', (_, value) => {
    expect(parseTraceparent(value)).toBeNull();
  });

  it('finds it among raw headers, with its tracestate, whatever the case of the names', () => {
    const found = findTraceParent([
      'Host',
      'x',
      'TraceParent',
      `00-${TRACE}-${SPAN}-01`,
      'tracestate',
      'a=1',
      'TRACESTATE',
      'b=2',
    ]);
    expect(found).toEqual({ traceId: TRACE, spanId: SPAN, flags: 1, tracestate: 'a=1,b=2' });
  });

  it('ignores a traceparent sent twice with different values, and a tracestate without a valid traceparent', () => {
    expect(
      findTraceParent(['traceparent', `00-${TRACE}-${SPAN}-01`, 'traceparent', `00-${TRACE}-${'1'.repeat(16)}-01`]),
    ).toBeNull();
    expect(
      findTraceParent(['traceparent', `00-${TRACE}-${SPAN}-01`, 'traceparent', `00-${TRACE}-${SPAN}-01`])?.spanId,
    ).toBe(SPAN);
    expect(findTraceParent(['tracestate', 'a=1'])).toBeNull();
  });

  it('keeps a well-formed tracestate and drops a malformed one', () => {
    expect(validTracestate('congo=t61rcWkgMzE, rojo=00f067aa0ba902b7')).toBe('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
    expect(validTracestate('tenant@vendor=x,,')).toBe('tenant@vendor=x');
    expect(validTracestate('Upper=1')).toBeUndefined();
    expect(validTracestate('a=1,a=2')).toBeUndefined();
    expect(validTracestate('novalue')).toBeUndefined();
    expect(validTracestate('a=has=equals')).toBeUndefined();
    expect(validTracestate(Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','))).toBeUndefined();
    expect(validTracestate(' , ')).toBeUndefined();
  });

  it('writes version 00', () => {
    expect(formatTraceparent(TRACE, SPAN, 1)).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(formatTraceparent(TRACE, SPAN, 0)).toBe(`00-${TRACE}-${SPAN}-00`);
  });
});

describe('tracing configuration', () => {
  it('is off without an OTLP endpoint, and with OTEL_SDK_DISABLED', () => {
    expect(tracingConfig({}).enabled).toBe(false);
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }).enabled).toBe(false);
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }).enabled).toBe(
      false,
    );
  });

  it('is on with either endpoint variable, named `anvil` by default', () => {
    const config = tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' });
    expect(config).toMatchObject({
      enabled: true,
      endpoint: 'http://c:4318/v1/traces',
      serviceName: 'anvil',
      maxQueueSize: 2048,
    });
    expect(
      tracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/traces', OTEL_SERVICE_NAME: 'edge' }),
    ).toMatchObject({ enabled: true, endpoint: 'http://c/traces', serviceName: 'edge' });
  });

  it('says which batch setting it could not use, and uses the default', () => {
    const config = tracingConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
      OTEL_BSP_MAX_QUEUE_SIZE: 'lots',
      OTEL_BSP_SCHEDULE_DELAY: '250',
    });
    expect(config.maxQueueSize).toBe(2048);
    expect(config.scheduleDelayMs).toBe(250);
    expect(config.problems).toEqual(['OTEL_BSP_MAX_QUEUE_SIZE="lots" is not a positive integer: 2048 is used']);
  });
});

describe('tracing sampler settings', () => {
  it('reads OTEL_TRACES_SAMPLER and its ratio, and names what it cannot use', () => {
    expect(tracingConfig({})).toMatchObject({ sampler: 'parentbased_always_on', samplerRatio: 1 });
    expect(tracingConfig({ OTEL_TRACES_SAMPLER: 'TraceIdRatio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toMatchObject({
      sampler: 'traceidratio',
      samplerRatio: 0.25,
    });
    const bad = tracingConfig({ OTEL_TRACES_SAMPLER: 'sometimes', OTEL_TRACES_SAMPLER_ARG: '2' });
    expect(bad).toMatchObject({ sampler: 'parentbased_always_on', samplerRatio: 1 });
    expect(bad.problems).toHaveLength(2);
  });
});

describe('the environment of actor threads', () => {
  it('is empty, but for the OTEL_* variables when tracing is on', () => {
    expect(threadEnvironment({ PATH: '/bin', OTEL_SERVICE_NAME: 'x' })).toEqual({});
    expect(
      threadEnvironment({
        PATH: '/bin',
        SECRET: 's',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
        OTEL_EXPORTER_OTLP_HEADERS: 'a=b',
      }),
    ).toEqual({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=b',
    });
  });
});
