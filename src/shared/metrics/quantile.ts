/**
 * The q-quantile (0..1) from cumulative buckets `[upper bound, observations at or below]` (the last
 * bound Infinity), estimated the way PromQL's histogram_quantile does: linear within the bucket.
 * Null without observations.
 */
export function quantile(buckets: ReadonlyArray<[number, number]>, q: number): number | null {
  const total = buckets.length === 0 ? 0 : buckets[buckets.length - 1]![1];
  if (total <= 0) return null;
  const rank = q * total;
  let lowerLe = 0;
  let lowerCount = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      if (le === Infinity) return lowerLe;
      return lowerLe + ((le - lowerLe) * (rank - lowerCount)) / Math.max(1, count - lowerCount);
    }
    lowerLe = le;
    lowerCount = count;
  }
  return lowerLe;
}
