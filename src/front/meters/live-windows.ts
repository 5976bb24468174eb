import { FIELD } from '../../shared/metrics/second-ring.js';
import { emptySums, latencyMs, windowFigures, type WindowFigures } from '../../shared/metrics/window-figures.js';
import { LIVE_SECONDS, type ApiRings } from './live-figures.js';

/** The windows the operator endpoints answer for, by their name in `?window=`. */
export const WINDOWS = { '1m': 60, '5m': 300 } as const;
export type WindowName = keyof typeof WINDOWS;

export function isWindowName(value: string): value is WindowName {
  return Object.hasOwn(WINDOWS, value);
}

/** The seconds a window's rates are over: the window, or the uptime when shorter (at least 1). */
export function covered(windowSeconds: number, uptimeSeconds: number): number {
  return Math.min(windowSeconds, Math.max(1, uptimeSeconds));
}

/** A window's figures of an API: `sums` (when given) gets its counts added, for totals over APIs. */
export function apiWindow(
  rings: ApiRings | undefined,
  now: number,
  seconds: number,
  covered: number,
  sums?: Float64Array,
): WindowFigures {
  const own = emptySums();
  rings?.api.sum(now, seconds, own);
  if (sums !== undefined) for (let f = 0; f < own.length; f++) sums[f]! += own[f]!;
  return windowFigures(own, covered);
}

/** Per route template (the routes that answered in the window), busiest first. */
export function routeWindows(
  rings: ApiRings | undefined,
  now: number,
  seconds: number,
  covered: number,
): Array<{ route: string } & WindowFigures> {
  const out: Array<{ route: string } & WindowFigures> = [];
  for (const [route, ring] of rings?.routes ?? []) {
    const sums = emptySums();
    ring.sum(now, seconds, sums);
    if (sums[FIELD.requests]! > 0) out.push({ route, ...windowFigures(sums, covered) });
  }
  return out.sort((a, b) => b.requests - a.requests || a.route.localeCompare(b.route));
}

/** One point per second of the last five minutes, oldest first, as columns (what chart libraries take). */
export interface SecondSeries {
  /** Unix seconds of each point. */
  t: number[];
  requests: number[];
  errors: number[];
  rateLimited: number[];
  p50Ms: Array<number | null>;
  p99Ms: Array<number | null>;
}

export function secondSeries(rings: ApiRings | undefined, now: number): SecondSeries {
  const series: SecondSeries = { t: [], requests: [], errors: [], rateLimited: [], p50Ms: [], p99Ms: [] };
  for (let second = now - LIVE_SECONDS + 1; second <= now; second++) {
    const slot = rings?.api.at(second) ?? null;
    series.t.push(second);
    series.requests.push(slot === null ? 0 : slot[FIELD.requests]!);
    series.errors.push(slot === null ? 0 : slot[FIELD.errors]!);
    series.rateLimited.push(slot === null ? 0 : slot[FIELD.rateLimited]!);
    series.p50Ms.push(slot === null ? null : latencyMs(slot, 0.5));
    series.p99Ms.push(slot === null ? null : latencyMs(slot, 0.99));
  }
  return series;
}
