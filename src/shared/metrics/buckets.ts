/**
 * Bucket bounds of the histograms that actor threads count and the router exports: a thread sends
 * counts per bucket (shared/protocol/stats.ts), so both must use these.
 */

/** Upper bounds (s) of the request latency histogram, shared by the router and the threads. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Upper bounds (s) of the sandbox CPU per call histogram: a trivial call costs ~10 µs. */
export const SANDBOX_CPU_BUCKETS = [
  0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/** The index of the histogram bucket `seconds` falls in (LATENCY_BUCKETS.length: +Inf). */
export function latencyBucket(seconds: number): number {
  return bucketOf(LATENCY_BUCKETS, seconds);
}

/** The index of the first upper bound `value` does not exceed (bounds.length: +Inf). */
export function bucketOf(bounds: readonly number[], value: number): number {
  let b = 0;
  while (b < bounds.length && value > bounds[b]!) b++;
  return b;
}
