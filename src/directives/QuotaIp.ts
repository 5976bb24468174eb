import { Errors } from '../shared/errors.js';
import { applyClientQuota, CLIENT_QUOTA_PROPERTIES, CLIENT_QUOTA_WINDOWS_REQUIRED } from './counters/client-quota.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Quota's twin counted per client IP address (the TCP peer, as RateLimit's *Ip limits): `day`
 * requests per UTC day and `month` per UTC month under the quota `name`; 429 over either; the
 * status in `target`; `count: false` only reads it.
 */
export default defineDirective({
  name: 'QuotaIp',
  summary: 'Counts requests per client IP per UTC day and month (429 over either); the status goes to memory `target`.',
  example: { day: 100, month: 2000 },
  failures: [{ error: Errors.clientQuotaExceeded, when: 'when the client IP used up its day or month quota' }],
  params: {
    type: 'object',
    properties: CLIENT_QUOTA_PROPERTIES,
    ...CLIENT_QUOTA_WINDOWS_REQUIRED,
    additionalProperties: false,
  },
  describe: () => ({ responses: { 429: "over the client address's daily or monthly quota" } }),
  async run(ctx, params) {
    await applyClientQuota(ctx, 'QuotaIp', params, `ip:${ctx.request.ip}`);
  },
});
