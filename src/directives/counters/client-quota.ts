import { createHash } from 'node:crypto';
import type { DirectiveContext } from '../../engine/context.js';
import type { ParamsOf } from '../../engine/directive-types.js';
import { Errors } from '../../shared/errors.js';
import {
  countWindows,
  judge,
  resetSeconds,
  setLimitHeaders,
  type LimitCount,
  type LimitWindow,
} from './limit-counters.js';
import { DAY_MS, monthWindow, spanWindow } from './windows.js';

const limit = { type: 'integer', minimum: 1, maximum: 1_000_000_000_000 } as const;

export const CLIENT_QUOTA_PROPERTIES = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  day: limit,
  month: limit,
  target: { type: 'string', minLength: 1 },
  count: { type: 'boolean' },
  failOpen: { type: 'boolean' },
} as const;

/** Parameters Quota and QuotaIp share. */
export type ClientQuotaParams = ParamsOf<{
  type: 'object';
  properties: typeof CLIENT_QUOTA_PROPERTIES;
  additionalProperties: false;
}>;

/** A quota needs at least one window. */
export const CLIENT_QUOTA_WINDOWS_REQUIRED = { anyOf: [{ required: ['day'] }, { required: ['month'] }] } as const;

/**
 * Quota and QuotaIp (the original's long-window quotas): a counter per API, quota `name` and
 * client (`subject`: a key, hashed so no secret is stored, or an IP address) per UTC day and per
 * UTC calendar month, in the store RateLimit uses. Over a limit: 429 with RateLimit's headers.
 * `target` receives the status; `count: false` only reads it.
 */
export async function applyClientQuota(
  ctx: DirectiveContext,
  directive: string,
  params: ClientQuotaParams,
  subject: string,
): Promise<void> {
  const now = ctx.api.now();
  const label = params.name ?? 'quota';
  const windows: LimitWindow[] = [];
  const add = (name: 'day' | 'month', max: number | undefined) => {
    if (max === undefined) return;
    const { endsAt, spanMs } = name === 'day' ? spanWindow(DAY_MS, now) : monthWindow(now);
    windows.push({ name, max, key: `quota:${label}:${name}:${subject}`, endsAt, spanMs });
  };
  add('day', params.day);
  add('month', params.month);
  if (windows.length === 0) return;

  const counting = params.count ?? true;
  const counts = await countWindows(
    ctx,
    directive,
    windows,
    { count: counting, failOpen: params.failOpen ?? true },
    now,
  );
  if (counts === null) {
    if (params.target !== undefined) ctx.memory.set(params.target, null);
    return;
  }
  const verdict = judge(counts);
  if (params.target !== undefined) ctx.memory.set(params.target, statusOf(counts, verdict.shown));
  if (!counting) return;
  setLimitHeaders(ctx.message, verdict);
  if (verdict.exceeded)
    throw Errors.clientQuotaExceeded(
      verdict.shown.window.name === 'day' ? 'daily' : 'monthly',
      verdict.shown.window.max,
    );
}

/** The key part of a client's counter: a digest of its key, so the store never holds the key itself. */
export function keySubject(key: unknown): string {
  const text = key === null || key === undefined ? '' : typeof key === 'string' ? key : JSON.stringify(key);
  return `key:${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
}

interface WindowStatus {
  limit: number;
  used: number;
  remaining: number;
  reset: number;
}

function windowStatus(count: LimitCount): WindowStatus {
  const used = Math.min(count.used, count.window.max);
  return { limit: count.window.max, used, remaining: count.window.max - used, reset: resetSeconds(count) };
}

/** `{ limit, used, remaining, reset, window, day?, month? }`: the shown window's figures (the headers'), then each window's. */
function statusOf(counts: LimitCount[], shown: LimitCount): Record<string, unknown> {
  const status: Record<string, unknown> = { ...windowStatus(shown), window: shown.window.name };
  for (const count of counts) status[count.window.name] = windowStatus(count);
  return status;
}
