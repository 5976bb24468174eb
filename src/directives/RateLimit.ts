import { Errors, QuotaError } from '../errors.js';

import { defineDirective } from './types.js';

interface Params {
  path?: string;
  dayTotal?: number;
  dayIp?: number;
  minuteTotal?: number;
  minuteIp?: number;
  failOpen?: boolean;
}

const MINUTE = 60_000;
const DAY = 86_400_000;
const limit = { type: 'integer', minimum: 1, maximum: 1_000_000_000 };

interface Window {
  name: string;
  max: number;
  span: number;
  perIp: boolean;
}

/**
 * Fixed windows (SPEC §7): a counter per API + label (+ client IP for the *Ip limits) per minute
 * and per day, in the shared store, so limits hold across threads, cells and restarts (and
 * instances sharing Redis). Each increment is one atomic operation. Over any limit: 429 with
 * retry-after and ratelimit-* headers. When the store cannot be reached the request is let through
 * (failOpen, default) or refused with 503, and the event is logged either way.
 */
export default defineDirective<Params>({
  name: 'RateLimit',
  summary: 'Fixed-window limits per minute and per day, for all clients and per client IP; 429 with retry-after and ratelimit-* headers.',
  params: {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1, maxLength: 200 },
      dayTotal: limit,
      dayIp: limit,
      minuteTotal: limit,
      minuteIp: limit,
      failOpen: { type: 'boolean' },
    },
    additionalProperties: false,
  },
  async run(ctx, params) {
    const windows: Window[] = [];
    if (params.minuteTotal !== undefined) windows.push({ name: 'minute', max: params.minuteTotal, span: MINUTE, perIp: false });
    if (params.minuteIp !== undefined) windows.push({ name: 'minute', max: params.minuteIp, span: MINUTE, perIp: true });
    if (params.dayTotal !== undefined) windows.push({ name: 'day', max: params.dayTotal, span: DAY, perIp: false });
    if (params.dayIp !== undefined) windows.push({ name: 'day', max: params.dayIp, span: DAY, perIp: true });
    if (windows.length === 0) return;

    const label = params.path ?? ctx.request.path;
    const now = Date.now();
    let counts: Array<{ value: number; ttlMs: number }>;
    try {
      counts = await Promise.all(
        windows.map((w) => {
          const index = Math.floor(now / w.span);
          const key = `ratelimit:${label}:${w.name}:${index}${w.perIp ? `:ip:${ctx.request.ip}` : ''}`;
          // The counter lives until its window ends.
          return ctx.api.kv.increment(key, 1, (index + 1) * w.span - now);
        }),
      );
    } catch (error) {
      const quota = error instanceof QuotaError;
      ctx.api.log('warn', quota ? "RateLimit: the API's key-value quota is full" : 'RateLimit: the store cannot be reached', { error: (error as Error).message, failOpen: params.failOpen ?? true });
      if (params.failOpen ?? true) return;
      if (quota) throw error;
      throw Errors.rateStoreDown();
    }

    // The tightest window decides the headers.
    let tightest = 0;
    let exceeded = -1;
    windows.forEach((w, i) => {
      const remaining = w.max - counts[i]!.value;
      const best = windows[tightest]!.max - counts[tightest]!.value;
      if (remaining < best) tightest = i;
      if (counts[i]!.value > w.max && (exceeded < 0 || counts[i]!.ttlMs > counts[exceeded]!.ttlMs)) exceeded = i;
    });
    const shown = exceeded >= 0 ? exceeded : tightest;
    const reset = Math.max(1, Math.ceil(counts[shown]!.ttlMs / 1000));
    ctx.message.setHeader('ratelimit-limit', String(windows[shown]!.max));
    ctx.message.setHeader('ratelimit-remaining', String(Math.max(0, windows[shown]!.max - counts[shown]!.value)));
    ctx.message.setHeader('ratelimit-reset', String(reset));
    if (exceeded >= 0) {
      ctx.message.setHeader('retry-after', String(reset));
      throw Errors.rateLimited();
    }
  },
});
