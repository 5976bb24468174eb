/**
 * Just enough of the Prometheus text format for `anvil bench`: read the samples of one scrape,
 * subtract two scrapes; the quantile of histogram buckets is shared/metrics/quantile.ts.
 */

export { quantile } from '../shared/metrics/quantile.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL))
      labels[name!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples of `name` whose labels include `match`. */
export function select(samples: readonly Sample[], name: string, match: Record<string, string>): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

export function sum(samples: readonly Sample[]): number {
  return samples.reduce((total, s) => total + s.value, 0);
}

/** Counter growth between two scrapes, grouped by one label (`class`, `reason`, …). */
export function growthBy(
  before: readonly Sample[],
  after: readonly Sample[],
  name: string,
  match: Record<string, string>,
  label: string,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of select(after, name, match)) out[s.labels[label] ?? ''] = (out[s.labels[label] ?? ''] ?? 0) + s.value;
  for (const s of select(before, name, match)) out[s.labels[label] ?? ''] = (out[s.labels[label] ?? ''] ?? 0) - s.value;
  for (const key of Object.keys(out)) if (out[key] === 0) delete out[key];
  return out;
}

/** Cumulative bucket counts (le → count) grown between two scrapes, summed over matching series. */
export function bucketGrowth(
  before: readonly Sample[],
  after: readonly Sample[],
  name: string,
  match: Record<string, string>,
): Array<[number, number]> {
  const byLe = new Map<number, number>();
  const add = (samples: readonly Sample[], sign: number) => {
    for (const s of select(samples, `${name}_bucket`, match)) {
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      byLe.set(le, (byLe.get(le) ?? 0) + sign * s.value);
    }
  };
  add(after, 1);
  add(before, -1);
  return [...byLe].sort((a, b) => a[0] - b[0]);
}
