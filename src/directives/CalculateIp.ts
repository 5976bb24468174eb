import { defineDirective, noParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'CalculateIp',
  summary:
    "Stores the client's address in memory `ip`: the peer (or what a --trusted-proxy forwarded), 127.0.0.1 over the bus, 0.0.0.0 in a job without one.",
  memory: { writes: ['ip'] },
  params: noParams,
  run(ctx) {
    // The router found the address (src/front/edge/client-address.ts), as RateLimit sees it; a job
    // queued by Push has none, where the original's worker wrote 0.0.0.0.
    ctx.memory.set('ip', ctx.request.ip || '0.0.0.0');
  },
});
