// The soak's outputs (bench/soak.mjs): the samples as CSV, a small SVG chart of them (hand-written
// polylines, no dependency), and the verdict: whether RSS or open file descriptors grew past their
// bound after the warm-up.
import { COLUMNS } from './soak-sample.mjs';

/**
 * The bounds, after the warm-up: the median of the last three samples against the median of the
 * first three. Memory may grow by 25 % or 32 MiB, whichever is more (a heap settles, caches fill to
 * their caps); descriptors by 32 (a few more connections or threads at the moment of a sample).
 */
export const BOUNDS = { rssRatio: 0.25, rssMiB: 32, fds: 32 };

export function toCsv(samples) {
  return `${COLUMNS.join(',')}\n${samples.map((s) => COLUMNS.map((c) => s[c]).join(',')).join('\n')}\n`;
}

const median3 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * What grew past its bound between the start and the end of the samples after `warmupSeconds`:
 * a list of messages (empty: flat), and the figures compared.
 */
export function verdict(samples, warmupSeconds) {
  const settled = samples.filter((s) => s.seconds >= warmupSeconds);
  if (settled.length < 6)
    return { problems: [`too few samples after the warm-up (${settled.length}; 6 needed): run longer`], figures: [] };
  const first = settled.slice(0, 3);
  const last = settled.slice(-3);
  const problems = [];
  const figures = [];
  const check = (name, unit, allowed) => {
    const from = median3(first.map((s) => s[name]));
    const to = median3(last.map((s) => s[name]));
    const limit = allowed(from);
    figures.push({ name, from, to, limit: Math.round(limit * 10) / 10, unit });
    if (to > limit)
      problems.push(
        `${name} grew from ${from} to ${to} ${unit} after the warm-up (bound ${Math.round(limit * 10) / 10} ${unit})`,
      );
  };
  const rss = (from) => from + Math.max(BOUNDS.rssMiB, from * BOUNDS.rssRatio);
  check('routerRssMiB', 'MiB', rss);
  check('cellsRssMiB', 'MiB', rss);
  check('routerFds', 'fds', (from) => from + BOUNDS.fds);
  check('cellsFds', 'fds', (from) => from + BOUNDS.fds);
  return { problems, figures };
}

const SERIES = [
  { column: 'routerRssMiB', label: 'router RSS (MiB)', colour: '#1f77b4' },
  { column: 'cellsRssMiB', label: 'cells RSS (MiB)', colour: '#ff7f0e' },
  { column: 'routerFds', label: 'router fds', colour: '#2ca02c' },
  { column: 'cellsFds', label: 'cells fds', colour: '#d62728' },
  { column: 'sqliteMiB', label: 'SQLite files (MiB)', colour: '#9467bd' },
  { column: 'jobsQueued', label: 'jobs queued', colour: '#8c564b' },
];

/** A chart of the samples: one panel per series, each scaled to its own range, the warm-up shaded. */
export function toSvg(samples, { warmupSeconds, title }) {
  const width = 720;
  const panel = 90;
  const left = 150;
  const right = 20;
  const top = 30;
  const height = top + SERIES.length * panel + 30;
  const end = Math.max(1, samples.at(-1)?.seconds ?? 1);
  const x = (seconds) => left + ((width - left - right) * seconds) / end;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="18" font-size="13">${escape(title)}</text>`,
    `<rect x="${x(0)}" y="${top}" width="${x(Math.min(warmupSeconds, end)) - x(0)}" height="${SERIES.length * panel}" fill="#eee"/>`,
  ];
  SERIES.forEach((series, i) => {
    const y0 = top + i * panel;
    const values = samples.map((s) => s[series.column]);
    const max = Math.max(...values, 1);
    const y = (v) => y0 + panel - 10 - ((panel - 20) * v) / max;
    const points = samples.map((s) => `${x(s.seconds).toFixed(1)},${y(s[series.column]).toFixed(1)}`).join(' ');
    parts.push(
      `<line x1="${left}" y1="${y0 + panel - 10}" x2="${width - right}" y2="${y0 + panel - 10}" stroke="#999"/>`,
      `<text x="8" y="${y0 + panel / 2}">${escape(series.label)}</text>`,
      `<text x="${left - 6}" y="${y(max) + 4}" text-anchor="end">${max}</text>`,
      `<text x="${left - 6}" y="${y0 + panel - 10}" text-anchor="end">0</text>`,
      `<polyline fill="none" stroke="${series.colour}" stroke-width="1.5" points="${points}"/>`,
    );
  });
  parts.push(
    `<text x="${left}" y="${height - 8}">0 s</text>`,
    `<text x="${width - right}" y="${height - 8}" text-anchor="end">${end} s (warm-up shaded)</text>`,
    '</svg>',
  );
  return `${parts.join('\n')}\n`;
}

function escape(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;');
}
