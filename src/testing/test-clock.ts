/** The virtual clock of a test case: RateLimit windows, Quota days, cached files and key TTLs go by it. */
export class TestClock {
  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `61s`, `5m`, `2h`, `1d`, `250ms`, or a number of ms; null when it is none of these. */
export function durationMs(value: string | number): number | null {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : null;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(value);
  if (match === null) return null;
  return Math.round(Number(match[1]) * UNIT_MS[match[2] ?? 'ms']!);
}
