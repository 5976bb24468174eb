import { defineDirective, noParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'CacheDisabled',
  summary: 'Sets cache-control: no-cache and removes expires.',
  params: noParams,
  run(ctx) {
    ctx.message.setHeader('cache-control', 'no-cache');
    ctx.message.removeHeader('expires');
  },
});
