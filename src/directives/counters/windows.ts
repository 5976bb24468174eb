/**
 * Fixed counting windows aligned to the clock (UTC): every thread, cell and instance counts a
 * request in the same one, and it ends at a known time (the store's window counter holds that end:
 * src/engine/window-counter.ts).
 */
export interface WindowSpan {
  /** The window's number or calendar name. */
  index: string;
  /** When the window ends, epoch ms. */
  endsAt: number;
  /** How long it is, ms (a month's own length). */
  spanMs: number;
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** The window of `spanMs` (a minute, a UTC day) holding `now`. */
export function spanWindow(spanMs: number, now: number): WindowSpan {
  const index = Math.floor(now / spanMs);
  return { index: String(index), endsAt: (index + 1) * spanMs, spanMs };
}

/** The UTC calendar month holding `now` (`2024-05`), ending at the first instant of the next month. */
export function monthWindow(now: number): WindowSpan {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const endsAt = Date.UTC(year, month + 1, 1);
  return { index: `${year}-${String(month + 1).padStart(2, '0')}`, endsAt, spanMs: endsAt - Date.UTC(year, month, 1) };
}
