import { friendlyUrl } from '../shared/text/friendly-url.js';
import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'StringToFriendlyUrl',
  summary: 'Stores the URL slug of `string` (`Crème Brûlée & Co` → `creme-brulee-and-co`) in memory `target`.',
  example: { string: '$.memory.post.title', target: 'slug' },
  memory: { writes: ['<target>'] },
  params: {
    type: 'object',
    properties: { string: { type: 'string' }, target: { type: 'string', minLength: 1 } },
    required: ['string', 'target'],
    additionalProperties: false,
  },
  run(ctx, params) {
    ctx.memory.set(params.target, friendlyUrl(params.string));
  },
});
