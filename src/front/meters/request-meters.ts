import { Counter, type Registry } from 'prom-client';
import { LATENCY_BUCKETS as BUCKETS, latencyBucket } from '../../shared/metrics/buckets.js';
import { histogramSamples, type HistogramCounts } from './histogram-samples.js';
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** Plain numbers per (host, API, route): counting a request is a few additions, no hashing. */
interface RouteMeter extends HistogramCounts {
  labels: { host: string; api: string; route: string };
  byClass: number[];
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
        values: [...meters.values()].flatMap((m) => histogramSamples('anvil_request_duration_seconds', BUCKETS, m)),
      }),
      reset: () => meters.clear(),
    } as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  observe(host: string, api: string, route: string, status: number, seconds: number): void {
    const m = this.meter(host, api, route);
    m.byClass[classIndex(status)]!++;
    m.buckets[latencyBucket(seconds)]!++;
    m.sum += seconds;
    m.count++;
  }

  /** Adds requests counted elsewhere (a thread that took bus calls straight from its peers). */
  add(
    host: string,
    api: string,
    route: string,
    status: number,
    count: number,
    sum: number,
    buckets: readonly number[],
  ): void {
    const m = this.meter(host, api, route);
    m.byClass[classIndex(status)]! += count;
    for (let b = 0; b < m.buckets.length && b < buckets.length; b++) m.buckets[b]! += buckets[b]!;
    m.sum += sum;
    m.count += count;
  }

  private meter(host: string, api: string, route: string): RouteMeter {
    const key = `${host}\0${api}\0${route}`;
    let m = this.meters.get(key);
    if (m === undefined) {
      m = {
        labels: { host, api, route },
        byClass: [0, 0, 0, 0, 0],
        buckets: new Array<number>(BUCKETS.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      this.meters.set(key, m);
    }
    return m;
  }
}

function classIndex(status: number): number {
  const cls = Math.floor(status / 100) - 1;
  return cls >= 0 && cls < 5 ? cls : 4;
}
