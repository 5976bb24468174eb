// Small statistics helpers shared by the benchmarks.

/** The median of a list of numbers (NaN when empty); non-finite values are left out. */
export function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The p-th percentile (0–100, nearest rank) of an already sorted array-like of numbers. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** p50, p90, p99 and max of a list of latencies (ms). */
export function summarize(latencies) {
  const sorted = Float64Array.from(latencies).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

/** For each numeric field of the runs' result objects, the median over the runs. */
export function medianOf(runs) {
  const out = {};
  for (const key of Object.keys(runs[0] ?? {})) {
    if (typeof runs[0][key] === 'number') out[key] = median(runs.map((r) => r[key]));
  }
  return out;
}

export const sum = (values) => values.reduce((a, b) => a + b, 0);
