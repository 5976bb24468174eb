import { countWindows, judge, setLimitHeaders, type LimitWindow } from './counters/limit-counters.js';
import { DAY_MS, MINUTE_MS, spanWindow } from './counters/windows.js';
import { Errors } from '../shared/errors.js';
import { defineDirective } from '../engine/directive-types.js';

const limit = { type: 'integer', minimum: 1, maximum: 1_000_000_000 } as const;

/**
 * Fixed windows (SPEC §7): a counter per API + label (+ client IP for the *Ip limits) for the
 * minute and for the day (a window counter: a clock step never grants a request twice), in the
 * shared store, so limits hold across threads, cells and restarts (and instances sharing Redis).
 * Each count is one atomic operation. Over any limit: 429 with
 * retry-after and ratelimit-* headers. When the store cannot be reached the request is let through
 * (failOpen, default) or refused with 503, and the event is logged either way.
 */
export default defineDirective({
  name: 'RateLimit',
  summary:
    'Fixed-window limits per minute and per day, for all clients and per client IP; 429 with retry-after and ratelimit-* headers.',
  example: { minuteIp: 60, dayTotal: 100000 },
  failures: [
    { error: Errors.rateLimited, when: 'over a limit, with retry-after and ratelimit-* headers' },
    { error: Errors.rateStoreDown, when: 'when the counter store cannot be reached and `failOpen` is false' },
  ],
  params: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description:
          'the name of the count: requests with the same `path` share it. Without it each request path counts on its own (`/notes/1` and `/notes/2` apart, also in `before`); give one name (e.g. `api`) for one limit over every endpoint that names it',
      },
      dayTotal: { ...limit, description: 'requests per UTC day, all clients together' },
      dayIp: { ...limit, description: 'requests per UTC day from one client IP' },
      minuteTotal: { ...limit, description: 'requests per minute, all clients together' },
      minuteIp: { ...limit, description: 'requests per minute from one client IP' },
      failOpen: {
        type: 'boolean',
        default: true,
        description:
          'let requests through (true) or refuse them with 503 (false) while the counter store cannot be reached',
      },
    },
    additionalProperties: false,
  },
  describe: () => ({ responses: { 429: 'over a rate limit (retry-after and ratelimit-* headers say when to retry)' } }),
  async run(ctx, params) {
    const label = params.path ?? ctx.request.path;
    const now = ctx.api.now();
    const windows: LimitWindow[] = [];
    const add = (name: string, max: number | undefined, spanMs: number, perIp: boolean) => {
      if (max === undefined) return;
      const { endsAt } = spanWindow(spanMs, now);
      windows.push({
        name,
        max,
        key: `ratelimit:${label}:${name}${perIp ? `:ip:${ctx.request.ip}` : ''}`,
        endsAt,
        spanMs,
      });
    };
    add('minute', params.minuteTotal, MINUTE_MS, false);
    add('minute', params.minuteIp, MINUTE_MS, true);
    add('day', params.dayTotal, DAY_MS, false);
    add('day', params.dayIp, DAY_MS, true);
    if (windows.length === 0) return;

    const counts = await countWindows(
      ctx,
      'RateLimit',
      windows,
      { count: true, failOpen: params.failOpen ?? true },
      now,
    );
    if (counts === null) return;
    const verdict = judge(counts);
    setLimitHeaders(ctx.message, verdict);
    if (verdict.exceeded) throw Errors.rateLimited();
  },
});
