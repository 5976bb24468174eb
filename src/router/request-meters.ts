import { Counter, type Registry } from 'prom-client';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** Plain numbers per (host, API, route): counting a request is a few additions, no hashing. */
interface RouteMeter {
  labels: { host: string; api: string; route: string };
  byClass: number[];
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * `anvil_requests_total` and `anvil_request_duration_seconds`, counted on the router's hot path in
 * plain arrays and handed to prom-client only when metrics are scraped (prom-client hashes the
 * labels on every observation, which costs more than the rest of the router's per-request work).
 */
export class RequestMeters {
  private readonly meters = new Map<string, RouteMeter>();

  constructor(registry: Registry) {
    const meters = this.meters;
    new Counter({
      name: 'anvil_requests_total',
      help: 'Requests to an API (HTTP and bus) by status class',
      labelNames: ['host', 'api', 'route', 'class'],
      registers: [registry],
      collect() {
        this.reset();
        for (const m of meters.values()) {
          m.byClass.forEach((n, i) => {
            if (n > 0) this.inc({ ...m.labels, class: STATUS_CLASSES[i]! }, n);
          });
        }
      },
    });
    registry.registerMetric({
      name: 'anvil_request_duration_seconds',
      get: async () => ({
        name: 'anvil_request_duration_seconds',
        help: 'Time from the router receiving a request to the response being ready',
        type: 'histogram',
        aggregator: 'sum',
        values: [...meters.values()].flatMap((m) => histogramValues(m)),
      }),
      reset: () => meters.clear(),
    } as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  observe(host: string, api: string, route: string, status: number, seconds: number): void {
    const key = `${host}\0${api}\0${route}`;
    let m = this.meters.get(key);
    if (m === undefined) {
      m = { labels: { host, api, route }, byClass: [0, 0, 0, 0, 0], buckets: new Array<number>(BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      this.meters.set(key, m);
    }
    const cls = Math.floor(status / 100) - 1;
    m.byClass[cls >= 0 && cls < 5 ? cls : 4]!++;
    let b = 0;
    while (b < BUCKETS.length && seconds > BUCKETS[b]!) b++;
    m.buckets[b]!++;
    m.sum += seconds;
    m.count++;
  }
}

function histogramValues(m: RouteMeter): Array<{ metricName: string; labels: Record<string, string | number>; value: number }> {
  const out: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
  let cumulative = 0;
  BUCKETS.forEach((le, i) => {
    cumulative += m.buckets[i]!;
    out.push({ metricName: 'anvil_request_duration_seconds_bucket', labels: { ...m.labels, le }, value: cumulative });
  });
  out.push({ metricName: 'anvil_request_duration_seconds_bucket', labels: { ...m.labels, le: '+Inf' }, value: m.count });
  out.push({ metricName: 'anvil_request_duration_seconds_sum', labels: m.labels, value: m.sum });
  out.push({ metricName: 'anvil_request_duration_seconds_count', labels: m.labels, value: m.count });
  return out;
}
