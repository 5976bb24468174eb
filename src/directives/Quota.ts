import { Errors } from '../shared/errors.js';
import {
  applyClientQuota,
  CLIENT_QUOTA_PROPERTIES,
  CLIENT_QUOTA_WINDOWS_REQUIRED,
  keySubject,
} from './counters/client-quota.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Per-client quota over long windows: `key` (usually the client's API key) may make `day` requests
 * per UTC day and `month` per UTC month, counted under the quota `name` (default one quota for the
 * whole API). Over either: 429 with retry-after and ratelimit-* headers. `target` gets `{ limit,
 * used, remaining, reset, window, day, month }`; `count: false` only reads it. A missing key is one
 * client of its own (the empty key).
 */
export default defineDirective({
  name: 'Quota',
  summary:
    'Counts requests per client key per UTC day and month (429 over either); the status goes to memory `target`.',
  example: { key: '$.message.header.api-key', day: 1000, month: 20000 },
  failures: [{ error: Errors.clientQuotaExceeded, when: 'when the key used up its day or month quota' }],
  params: {
    type: 'object',
    properties: { key: { type: ['string', 'number', 'null'], maxLength: 4096 }, ...CLIENT_QUOTA_PROPERTIES },
    required: ['key'],
    ...CLIENT_QUOTA_WINDOWS_REQUIRED,
    additionalProperties: false,
  },
  describe: () => ({ responses: { 429: "over the client's daily or monthly quota" } }),
  async run(ctx, params) {
    await applyClientQuota(ctx, 'Quota', params, keySubject(params.key));
  },
});
