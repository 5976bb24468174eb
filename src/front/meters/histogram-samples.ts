/** One sample of a histogram as prom-client's registerMetric takes them. */
export interface HistogramSample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/** A histogram counted elsewhere in plain arrays, kept until scraped. */
export interface HistogramCounts {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

/** The `_bucket` (cumulative), `_sum` and `_count` samples of one labelled histogram. */
export function histogramSamples(name: string, bounds: readonly number[], m: HistogramCounts): HistogramSample[] {
  const out: HistogramSample[] = [];
  let cumulative = 0;
  bounds.forEach((le, i) => {
    cumulative += m.buckets[i]!;
    out.push({ metricName: `${name}_bucket`, labels: { ...m.labels, le }, value: cumulative });
  });
  out.push({ metricName: `${name}_bucket`, labels: { ...m.labels, le: '+Inf' }, value: m.count });
  out.push({ metricName: `${name}_sum`, labels: m.labels, value: m.sum });
  out.push({ metricName: `${name}_count`, labels: m.labels, value: m.count });
  return out;
}
