import { anonymizeIp } from './support/anonymize-ip.js';
import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'AnonymizeIp',
  summary:
    'Stores `ip` masked in memory `target`: IPv4 last octet zeroed, IPv6 last 80 bits zeroed; null when it is not an address.',
  example: { ip: '$.memory.ip', target: 'anonymousIp' },
  memory: { writes: ['<target>'] },
  params: {
    type: 'object',
    properties: { ip: { type: ['string', 'null'] }, target: { type: 'string', minLength: 1 } },
    required: ['ip', 'target'],
    additionalProperties: false,
  },
  run(ctx, params) {
    ctx.memory.set(params.target, params.ip === null ? null : anonymizeIp(params.ip));
  },
});
