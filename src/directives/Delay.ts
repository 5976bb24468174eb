import { setTimeout as sleep } from 'node:timers/promises';
import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'Delay',
  summary: 'Waits `ms` milliseconds without blocking the thread (for demos and for testing timeouts).',
  example: { ms: 250 },
  params: {
    type: 'object',
    properties: { ms: { type: 'integer', minimum: 0, maximum: 60000 } },
    required: ['ms'],
    additionalProperties: false,
  },
  async run(_ctx, { ms }) {
    await sleep(ms);
  },
});
