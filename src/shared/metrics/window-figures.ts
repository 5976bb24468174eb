import { LATENCY_BUCKETS } from './buckets.js';
import { quantile } from './quantile.js';
import { FIELD, FIELDS, LATENCY_SLOTS } from './second-ring.js';

/** What the operator endpoints show of a window (GET /anvil/overview, /anvil/api/<key>/stats). */
export interface WindowFigures {
  requests: number;
  /** Requests per second over the window (or over the uptime, when shorter). */
  perSecond: number;
  /** Requests that ended with a status >= 500. */
  errors: number;
  /** errors / requests, 0..1 (0 without requests). */
  errorRate: number;
  /** Answers 429 Too Many Requests. */
  rateLimited: number;
  /** Latency percentiles in milliseconds, estimated from the histogram's buckets; null without requests. */
  p50Ms: number | null;
  p99Ms: number | null;
  /** Custom directive calls that breached a sandbox limit (cpu, wall, memory) or broke their sandbox. */
  sandboxBreaches: number;
  /** Job runs that failed for good (no retry left). */
  jobsFailed: number;
}

export function emptySums(): Float64Array {
  return new Float64Array(FIELDS);
}

/** Figures of summed ring fields over `seconds` (the time they cover). */
export function windowFigures(sums: Float64Array, seconds: number): WindowFigures {
  const requests = sums[FIELD.requests]!;
  const errors = sums[FIELD.errors]!;
  return {
    requests,
    perSecond: round(requests / Math.max(1, seconds), 3),
    errors,
    errorRate: requests === 0 ? 0 : round(errors / requests, 4),
    rateLimited: sums[FIELD.rateLimited]!,
    p50Ms: latencyMs(sums, 0.5),
    p99Ms: latencyMs(sums, 0.99),
    sandboxBreaches: sums[FIELD.breaches]!,
    jobsFailed: sums[FIELD.jobsFailed]!,
  };
}

/** The q-quantile of the latency buckets in `fields` (a slot or summed slots), in ms, or null. */
export function latencyMs(fields: ArrayLike<number>, q: number): number | null {
  const cumulative: Array<[number, number]> = [];
  let running = 0;
  for (let b = 0; b < LATENCY_SLOTS; b++) {
    running += fields[FIELD.latency + b]!;
    cumulative.push([b < LATENCY_BUCKETS.length ? LATENCY_BUCKETS[b]! : Infinity, running]);
  }
  const seconds = quantile(cumulative, q);
  return seconds === null ? null : round(seconds * 1000, 3);
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
