import { defineDirective } from '../engine/directive-types.js';

const ELEMENT = /^element([1-9][0-9]*)$/;

export default defineDirective({
  name: 'Concat',
  summary: 'Joins element1 … elementN, in number order, into memory `target`.',
  example: { target: 'greeting', element1: 'Hello, ', element2: '$.message.pathParam.name' },
  memory: { writes: ['<target>'] },
  params: {
    type: 'object',
    properties: { target: { type: 'string', minLength: 1 } },
    patternProperties: { '^element[1-9][0-9]*$': {} },
    required: ['target'],
    additionalProperties: false,
  },
  run(ctx, params) {
    const parts: Array<[number, unknown]> = [];
    for (const [name, value] of Object.entries(params)) {
      const match = ELEMENT.exec(name);
      if (match) parts.push([Number(match[1]), value]);
    }
    parts.sort((a, b) => a[0] - b[0]);
    ctx.memory.set(params.target, parts.map(([, value]) => asText(value)).join(''));
  },
});

function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
