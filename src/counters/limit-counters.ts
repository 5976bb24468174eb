import type { DirectiveContext } from '../engine/context.js';
import type { Message } from '../engine/message.js';
import { Errors, QuotaError } from '../errors.js';

/** One limit to count a request against: its counter's key in the API's store, its maximum and when it ends. */
export interface LimitWindow {
  name: string;
  max: number;
  key: string;
  endsAt: number;
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
 * Counts the request in every window (one atomic increment each, which also sets the counter's
 * expiry to the window's end), or with `count: false` only reads them. When the store fails the
 * event is logged and the request goes on (`failOpen`, the default: null is returned) or is refused:
 * the API's own key-value quota error as is, an unreachable store with 503.
 */
export async function countWindows(ctx: DirectiveContext, directive: string, windows: LimitWindow[], options: { count: boolean; failOpen: boolean }): Promise<LimitCount[] | null> {
  const now = Date.now();
  try {
    return await Promise.all(
      windows.map(async (window) => {
        if (options.count) {
          const { value, ttlMs } = await ctx.api.kv.increment(window.key, 1, window.endsAt - now);
          return { window, used: value, msLeft: ttlMs };
        }
        const stored = Number(await ctx.api.kv.get(window.key));
        return { window, used: Number.isSafeInteger(stored) ? stored : 0, msLeft: window.endsAt - now };
      }),
    );
  } catch (error) {
    const quota = error instanceof QuotaError;
    ctx.api.log('warn', quota ? `${directive}: the API's key-value quota is full` : `${directive}: the store cannot be reached`, { error: (error as Error).message, failOpen: options.failOpen });
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
