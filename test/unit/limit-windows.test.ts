import { describe, expect, it } from 'vitest';
import { judge, type LimitCount } from '../../src/directives/counters/limit-counters.js';
import { DAY_MS, monthWindow, spanWindow } from '../../src/directives/counters/windows.js';

// The windows RateLimit, Quota and QuotaIp count in, at chosen instants (a controlled clock).

describe('counting windows', () => {
  it('cuts days at UTC midnight', () => {
    const before = spanWindow(DAY_MS, Date.UTC(2024, 4, 31, 23, 59, 59, 999));
    const after = spanWindow(DAY_MS, Date.UTC(2024, 5, 1, 0, 0, 0, 0));
    expect(before.endsAt).toBe(Date.UTC(2024, 5, 1));
    expect(Number(after.index)).toBe(Number(before.index) + 1);
  });

  it('cuts months at the first instant of the next UTC month, December into January, February of a leap year', () => {
    expect(monthWindow(Date.UTC(2024, 4, 31, 23, 59, 59, 999))).toEqual({
      index: '2024-05',
      endsAt: Date.UTC(2024, 5, 1),
      spanMs: 31 * DAY_MS,
    });
    expect(monthWindow(Date.UTC(2024, 5, 1))).toEqual({
      index: '2024-06',
      endsAt: Date.UTC(2024, 6, 1),
      spanMs: 30 * DAY_MS,
    });
    expect(monthWindow(Date.UTC(2024, 11, 15))).toEqual({
      index: '2024-12',
      endsAt: Date.UTC(2025, 0, 1),
      spanMs: 31 * DAY_MS,
    });
    expect(monthWindow(Date.UTC(2024, 1, 29, 12))).toEqual({
      index: '2024-02',
      endsAt: Date.UTC(2024, 2, 1),
      spanMs: 29 * DAY_MS,
    });
  });
});

describe('judge', () => {
  const count = (name: string, max: number, used: number, msLeft: number): LimitCount => ({
    window: { name, max, key: name, endsAt: 0, spanMs: 1 },
    used,
    msLeft,
  });

  it('shows the window with the fewest requests left while none is exceeded', () => {
    const day = count('day', 100, 10, 1_000);
    const month = count('month', 20, 18, 9_000);
    expect(judge([day, month])).toEqual({ shown: month, exceeded: false });
  });

  it('shows the exceeded window that ends last, so retry-after is when every limit admits again', () => {
    const day = count('day', 5, 6, 1_000);
    const month = count('month', 5, 6, 9_000);
    expect(judge([day, month])).toEqual({ shown: month, exceeded: true });
    expect(judge([day, count('month', 50, 6, 9_000)])).toEqual({ shown: day, exceeded: true });
  });
});
