import { defineDirective, noParams } from '../engine/directive-types.js';

const HEADER = 'x-correlation-id';
/** A correlation id from outside is reused only if it is short and printable (it goes into logs). */
const ACCEPTABLE = /^[\x21-\x7e]{1,128}$/;

export default defineDirective({
  name: 'PropagateCorrelationId',
  summary: "Reuses the request's x-correlation-id (or keeps the generated one) for the response and outgoing calls.",
  memory: { reads: ['correlationId'], writes: ['correlationId'] },
  params: noParams,
  run(ctx) {
    const incoming = ctx.message.header(HEADER);
    const value =
      typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : ctx.memory.get('correlationId');
    ctx.memory.set('correlationId', value);
  },
});
