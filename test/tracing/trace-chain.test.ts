import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { waitFor } from '../helpers/wait-for.js';

// Tracing (issue 27): a client's traceparent is accepted; API A pulls API B over the bus, B pulls an
// upstream over HTTP; every hop is a span, exported with OTLP/HTTP to a receiver this test runs, and
// the upstream receives a traceparent naming the span of its hop. Without tracing nothing is
// exported and the client's trace context is passed on unchanged (none added when it sent none).

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

function apis(upstreamPort: number) {
  return {
    front: {
      'api.yaml': `key: front
endpoints:
  get /chain:
    CallBack: { directive: Pull, host: $.memory.anvil-localhost, path: /back/fetch, target: got }
    Reply: { directive: ModifyMessage, body: $.memory.got }
`,
    },
    back: {
      'api.yaml': `key: back
endpoints:
  get /fetch:
    Stamp: { directive: Stamp }
    CallUpstream: { directive: Pull, host: "http://127.0.0.1:${upstreamPort}", path: /echo, target: echoed }
    Reply: { directive: ModifyMessage, body: $.memory.echoed }
`,
      'Directives/Stamp.js': `export default function (state) {
  let sum = 0;
  for (let i = 0; i < 10000; i++) sum += i;
  state.memory.set('stamp', sum);
}
`,
    },
  };
}

/** What the upstream received, as the chain hands its echo back: its request headers. */
async function upstreamHeaders(
  anvil: TestInstance,
  headers: Record<string, string> = {},
): Promise<Record<string, string>> {
  const reply = await anvil.request('/front/chain', { headers });
  expect(reply.status, reply.text).toBe(200);
  return reply.json<{ headers: Record<string, string> }>().headers;
}

function only(spans: ReceivedSpan[], what: string, test: (span: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(test);
  expect(found.length, `${what} among ${JSON.stringify(spans.map((s) => [s.name, s.spanId, s.parentSpanId]))}`).toBe(1);
  return found[0]!;
}

/**
 * The chain's parts for one describe: an upstream, a receiver and an instance started with `env`
 * (the receiver's URL in place of $RECEIVER), stopped after its tests.
 */
function chain(env: Record<string, string>): { upstream: Upstream; receiver: OtlpReceiver; anvil: TestInstance } {
  const parts = {} as { upstream: Upstream; receiver: OtlpReceiver; anvil: TestInstance };
  beforeAll(async () => {
    parts.upstream = await startUpstream();
    parts.receiver = await startOtlpReceiver();
    const withReceiver = Object.fromEntries(
      Object.entries(env).map(([name, value]) => [name, value.replace('$RECEIVER', parts.receiver.url)]),
    );
    parts.anvil = await startInstance({
      apis: apis(parts.upstream.port),
      env: { OTEL_BSP_SCHEDULE_DELAY: '100', ANVIL_EGRESS_ALLOW: '127.0.0.1', ...withReceiver },
    });
  });
  afterAll(async () => {
    await parts.anvil?.dispose();
    await parts.receiver?.close();
    await parts.upstream?.close();
  });
  return parts;
}

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  const parts = chain({ OTEL_EXPORTER_OTLP_ENDPOINT: '$RECEIVER', OTEL_SERVICE_NAME: '' });

  it('shows client → A → bus → B → upstream as one trace, each hop the parent of the next', async () => {
    const received = await upstreamHeaders(parts.anvil, { traceparent: CLIENT_TRACEPARENT, tracestate: 'vendor=abc' });
    const [, traceId, upstreamParent] = TRACEPARENT.exec(received.traceparent ?? '') ?? [];
    expect(traceId, `the upstream got ${received.traceparent}`).toBe(CLIENT_TRACE);
    expect(upstreamParent).not.toBe(CLIENT_SPAN);
    expect(received.tracestate).toBe('vendor=abc');

    const spans = await waitFor(
      () => {
        const ofTrace = parts.receiver.spans().filter((s) => s.traceId === CLIENT_TRACE);
        return ofTrace.some((s) => s.spanId === upstreamParent) && ofTrace.some((s) => s.name === 'GET /chain')
          ? ofTrace
          : null;
      },
      { what: 'the spans of the trace, the upstream hop and the request to A among them' },
    );
    expect(spans.length).toBeGreaterThanOrEqual(4);

    const front = only(spans, 'the request to A', (s) => s.kind === SERVER && s.attributes['anvil.api'] === 'front');
    expect(front.parentSpanId).toBe(CLIENT_SPAN);
    expect(front.name).toBe('GET /chain');
    expect(front.attributes['http.route']).toBe('/chain');
    expect(front.attributes['http.response.status_code']).toBe(200);
    expect(front.resource['service.name']).toBe('anvil');

    const callBack = only(spans, "A's Pull entry", (s) => s.parentSpanId === front.spanId && s.name === 'CallBack');
    expect(callBack.kind).toBe(INTERNAL);
    expect(callBack.attributes['anvil.directive']).toBe('Pull');
    expect(callBack.attributes['anvil.api']).toBe('front');

    const bus = only(spans, 'the bus call to B', (s) => s.parentSpanId === callBack.spanId);
    expect(bus.kind).toBe(CLIENT);
    expect(bus.name).toBe('GET /back');
    expect(bus.attributes['anvil.bus']).toBe(true);

    const back = only(spans, 'the request to B', (s) => s.parentSpanId === bus.spanId);
    expect(back.kind).toBe(SERVER);
    expect(back.name).toBe('GET /fetch');
    expect(back.attributes['anvil.api']).toBe('back');
    expect(back.attributes['anvil.via_bus']).toBe(true);

    const stamp = only(spans, "B's custom directive", (s) => s.parentSpanId === back.spanId && s.name === 'Stamp');
    expect(stamp.attributes['anvil.directive']).toBe('Stamp');
    expect(typeof stamp.attributes['anvil.sandbox.cpu_us']).toBe('number');
    expect(stamp.attributes['anvil.sandbox.cpu_us']).toBeGreaterThan(0);

    const callUpstream = only(
      spans,
      "B's Pull entry",
      (s) => s.parentSpanId === back.spanId && s.name === 'CallUpstream',
    );
    const hop = only(spans, 'the HTTP call to the upstream', (s) => s.parentSpanId === callUpstream.spanId);
    expect(hop.kind).toBe(CLIENT);
    expect(hop.spanId).toBe(upstreamParent);
    expect(hop.attributes['http.response.status_code']).toBe(200);
    expect(hop.attributes['url.full']).toBe(`http://127.0.0.1:${parts.upstream.port}/echo`);
  });

  it('starts a new trace when the traceparent is not valid', async () => {
    const received = await upstreamHeaders(parts.anvil, { traceparent: `00-${'0'.repeat(32)}-${CLIENT_SPAN}-01` });
    const [, traceId] = TRACEPARENT.exec(received.traceparent ?? '') ?? [];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('0'.repeat(32));
    const root = await waitFor(
      () => parts.receiver.spans().find((s) => s.traceId === traceId && s.name === 'GET /chain'),
      { what: "the new trace's request span" },
    );
    expect(root.parentSpanId).toBe('');
  });

  it('answers as usual when the collector is gone', async () => {
    await parts.receiver.close();
    for (let i = 0; i < 5; i++) {
      const received = await upstreamHeaders(parts.anvil, { traceparent: CLIENT_TRACEPARENT });
      expect(received.traceparent).toMatch(TRACEPARENT);
    }
  });
});

describe('tracing off', () => {
  // The endpoint is set but OTEL_SDK_DISABLED turns tracing off, as no endpoint at all does: had
  // anything been exported, the receiver would have it.
  const parts = chain({ OTEL_EXPORTER_OTLP_ENDPOINT: '$RECEIVER', OTEL_SDK_DISABLED: 'true' });

  it('adds no traceparent when the client sent none', async () => {
    const received = await upstreamHeaders(parts.anvil);
    expect(received.traceparent).toBeUndefined();
    expect(received.tracestate).toBeUndefined();
  });

  it("passes the client's trace context on unchanged, and drops an invalid one", async () => {
    const received = await upstreamHeaders(parts.anvil, { traceparent: CLIENT_TRACEPARENT, tracestate: 'vendor=abc' });
    expect(received.traceparent).toBe(CLIENT_TRACEPARENT);
    expect(received.tracestate).toBe('vendor=abc');
    const invalid = await upstreamHeaders(parts.anvil, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01-extra` });
    expect(invalid.traceparent).toBeUndefined();
  });

  it('exports nothing', async () => {
    await upstreamHeaders(parts.anvil, { traceparent: CLIENT_TRACEPARENT });
    // Ten times the batch delay the exporter would have had.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(parts.receiver.requests()).toBe(0);
    expect(parts.anvil.output()).not.toContain('tracing on');
  });
});
