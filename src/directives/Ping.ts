import { defineDirective, noParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'Ping',
  summary: 'Answers 200 {"message":"pong"}.',
  params: noParams,
  run(ctx) {
    ctx.message.respondJson(200, { message: 'pong' });
  },
});
