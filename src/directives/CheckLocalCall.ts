import { Errors } from '../shared/errors.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'CheckLocalCall',
  summary: 'Refuses with 401 unless the request came over the in-process bus from another API of this instance.',
  failures: [
    {
      error: Errors.unauthorized,
      when: 'when the request did not come over the bus from another API of this instance',
    },
  ],
  params: noParams,
  run(ctx) {
    if (!ctx.request.viaBus) throw Errors.unauthorized();
  },
});
