/**
 * A window counter (KvStore.countInWindow): one key per limit, holding the count and the end of
 * the fixed window it counts, as `<count>@<end, epoch ms>`. The window comes from the caller's
 * clock; the store's own clock only forgets the key. The rule, here and in WINDOW_COUNT_LUA
 * (redis-kv-lua.ts), which must agree:
 *
 * - no counter, or one of a window that ended before the caller's: a fresh count in the caller's
 *   window (time moved on, or the clock stepped forward);
 * - the caller's window, or one that ends later by at most one window (the caller's clock is a
 *   little behind: another instance's at a boundary, or a small step back): added to the counter's
 *   window, which keeps its end;
 * - a window that ends later by more than one window (the clock stepped back): added, and the
 *   counter takes the caller's window, so the caller's next window starts fresh.
 *
 * So a clock step never grants a request twice: the count of the current window is never lost.
 */

/** The window a request is counted in: when it ends (epoch ms) and how long it is (ms). */
export interface CountWindow {
  endsAt: number;
  spanMs: number;
}

/** What a window counter holds. */
export interface WindowCount {
  value: number;
  endsAt: number;
}

export function encodeWindowCount(count: WindowCount): string {
  return `${count.value}@${count.endsAt}`;
}

/** The counter a stored value holds; undefined when the value is not a window counter. */
export function decodeWindowCount(text: string): WindowCount | undefined {
  const match = /^(-?\d{1,16})@(\d{1,16})$/.exec(text);
  if (match === null) return undefined;
  const value = Number(match[1]);
  const endsAt = Number(match[2]);
  return Number.isSafeInteger(value) && Number.isSafeInteger(endsAt) ? { value, endsAt } : undefined;
}

/** What a request in `window` sees of the counter without counting (0 in a fresh window). */
export function seenWindowCount(stored: WindowCount | null, window: CountWindow): WindowCount {
  if (stored === null || stored.endsAt < window.endsAt) return { value: 0, endsAt: window.endsAt };
  return { value: stored.value, endsAt: stored.endsAt - window.endsAt > window.spanMs ? window.endsAt : stored.endsAt };
}

/** The counter after counting `by` in `window` (see the header). */
export function nextWindowCount(stored: WindowCount | null, by: number, window: CountWindow): WindowCount {
  const seen = seenWindowCount(stored, window);
  return { value: seen.value + by, endsAt: seen.endsAt };
}
