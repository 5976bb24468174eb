import { Errors } from '../shared/errors.js';
import { safeEqual } from '../shared/security/safe-equal.js';
import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'CheckKey',
  summary:
    'Refuses with 401 unless `current` equals `expected` (compared in constant time); an empty `expected` always refuses.',
  example: { expected: '$.map.main.apiKey', current: '$.message.header.api-key' },
  failures: [{ error: Errors.unauthorized, when: 'when `current` differs from `expected`, or `expected` is empty' }],
  params: {
    type: 'object',
    properties: {
      expected: { type: ['string', 'number', 'null'], writeOnly: true },
      current: { type: ['string', 'number', 'null'], writeOnly: true },
    },
    required: ['expected', 'current'],
    additionalProperties: false,
  },
  describe: (params) => ({
    responses: { 401: 'the key is missing or wrong' },
    ...(typeof params.current === 'string' ? { credential: params.current } : {}),
  }),
  run(_ctx, { expected, current }) {
    const want = expected === null || expected === undefined ? '' : String(expected);
    const got = current === null || current === undefined ? '' : String(current);
    if (want === '' || !safeEqual(want, got)) throw Errors.unauthorized();
  },
});
