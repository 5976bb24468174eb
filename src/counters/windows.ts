/**
 * Fixed counting windows aligned to the clock (UTC): a window is named by its index, so every
 * thread, cell and instance counts a request in the same one, and it ends at a known time.
 */
export interface WindowSpan {
  /** Part of the counter's key: the window's number or calendar name. */
  index: string;
  /** When the window ends (and its counter expires), epoch ms. */
  endsAt: number;
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** The window of `spanMs` (a minute, a UTC day) holding `now`. */
export function spanWindow(spanMs: number, now: number): WindowSpan {
  const index = Math.floor(now / spanMs);
  return { index: String(index), endsAt: (index + 1) * spanMs };
}

/** The UTC calendar month holding `now` (`2024-05`), ending at the first instant of the next month. */
export function monthWindow(now: number): WindowSpan {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  return { index: `${year}-${String(month + 1).padStart(2, '0')}`, endsAt: Date.UTC(year, month + 1, 1) };
}
