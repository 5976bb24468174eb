import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** A span as an OTLP/HTTP JSON export carries it, with its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a trace's root. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  /** The resource's attributes (service.name…). */
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the OTEL_EXPORTER_OTLP_ENDPOINT to give an instance. */
  readonly url: string;
  /** Every span received so far. */
  spans(): ReceivedSpan[];
  /** Export requests received so far (any path). */
  requests(): number;
  close(): Promise<void>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };

/**
 * A real OTLP/HTTP receiver on loopback: takes POST /v1/traces in the JSON encoding (gzip or not),
 * answers 200 `{}` as a collector does, and keeps the spans.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  let requests = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests++;
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !String(req.headers['content-type']).startsWith('application/json')
      ) {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      collect(JSON.parse(body.toString('utf8')), received);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function collect(request: any, into: ReceivedSpan[]): void {
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = flatten(resourceSpans.resource?.attributes ?? []);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        into.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          attributes: flatten(span.attributes ?? []),
          status: span.status ?? {},
          resource,
        });
      }
    }
  }
}

function flatten(attributes: OtlpAttribute[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}
