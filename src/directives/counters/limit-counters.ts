import type { DirectiveContext } from '../../engine/context.js';
import type { Message } from '../../engine/message.js';
import { Errors, QuotaError } from '../../shared/errors.js';
import type { KvStore } from '../../engine/kv-store.js';
import { decodeWindowCount, seenWindowCount, type WindowCount } from '../../engine/window-counter.js';

/**
 * One limit to count a request against: its counter's key in the API's store (one key per limit,
 * whatever the window), its maximum, and the window the clock is in.
 */
export interface LimitWindow {
  name: string;
  max: number;
  key: string;
  endsAt: number;
  spanMs: number;
}

/** A window with the requests counted in it and the time left, ms. */
export interface LimitCount {
  window: LimitWindow;
  used: number;
  msLeft: number;
}

/** The window the headers show, and whether it is over its maximum. */
export interface LimitVerdict {
  shown: LimitCount;
  exceeded: boolean;
}

/**
 * Counts the request in every window at `now` (the caller's clock: one window counter each, one
 * atomic step, see src/engine/window-counter.ts for what a clock step does), or with `count: false`
 * only reads them. The store forgets a counter a window after its window ends.
 */
export async function countAt(kv: KvStore, windows: LimitWindow[], count: boolean, now: number): Promise<LimitCount[]> {
  return Promise.all(
    windows.map(async (window) => {
      const span = { endsAt: window.endsAt, spanMs: window.spanMs };
      const counted = count
        ? await kv.countInWindow(window.key, 1, span, window.endsAt - now + window.spanMs)
        : seenWindowCount(stored(await kv.get(window.key)), span);
      return { window, used: counted.value, msLeft: Math.max(0, counted.endsAt - now) };
    }),
  );
}

/** A counter as stored; one that is not a window counter (written before, or by other code) counts as none. */
function stored(text: string | null): WindowCount | null {
  return text === null ? null : (decodeWindowCount(text) ?? null);
}

/**
 * `countAt` now, for a directive. When the store fails the event is logged and the request goes
 * on (`failOpen`, the default: null is returned) or is refused: the API's own key-value quota
 * error as is, an unreachable store with 503.
 */
export async function countWindows(
  ctx: DirectiveContext,
  directive: string,
  windows: LimitWindow[],
  options: { count: boolean; failOpen: boolean },
  now: number,
): Promise<LimitCount[] | null> {
  try {
    return await countAt(ctx.api.kv, windows, options.count, now);
  } catch (error) {
    const quota = error instanceof QuotaError;
    ctx.api.log(
      'warn',
      quota ? `${directive}: the API's key-value quota is full` : `${directive}: the store cannot be reached`,
      { error: (error as Error).message, failOpen: options.failOpen },
    );
    if (options.failOpen) return null;
    if (quota) throw error;
    throw Errors.rateStoreDown();
  }
}

/** The window to show: the first one over its maximum that ends last, else the one with the fewest requests left. */
export function judge(counts: LimitCount[]): LimitVerdict {
  let tightest = counts[0]!;
  let exceeded: LimitCount | null = null;
  for (const count of counts) {
    if (count.window.max - count.used < tightest.window.max - tightest.used) tightest = count;
    if (count.used > count.window.max && (exceeded === null || count.msLeft > exceeded.msLeft)) exceeded = count;
  }
  return exceeded === null ? { shown: tightest, exceeded: false } : { shown: exceeded, exceeded: true };
}

/** Seconds until the window ends, at least 1. */
export function resetSeconds(count: LimitCount): number {
  return Math.max(1, Math.ceil(count.msLeft / 1000));
}

/** `ratelimit-limit`, `-remaining`, `-reset` of the shown window, and `retry-after` when it is exceeded. */
export function setLimitHeaders(message: Message, verdict: LimitVerdict): void {
  const { shown } = verdict;
  const reset = String(resetSeconds(shown));
  message.setHeader('ratelimit-limit', String(shown.window.max));
  message.setHeader('ratelimit-remaining', String(Math.max(0, shown.window.max - shown.used)));
  message.setHeader('ratelimit-reset', reset);
  if (verdict.exceeded) message.setHeader('retry-after', reset);
}
