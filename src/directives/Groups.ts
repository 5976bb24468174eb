import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'Groups',
  summary: 'Disables all groups, then disables and enables the listed ones; does nothing when `if` is given and falsy.',
  example: { enable: ['admin_flow'], disable: ['normal_flow'] },
  params: {
    type: 'object',
    properties: {
      enable: { type: 'array', items: { type: 'string', minLength: 1 } },
      disable: { type: 'array', items: { type: 'string', minLength: 1 } },
      disableAll: { type: 'boolean' },
      if: {},
    },
    additionalProperties: false,
  },
  run(ctx, params) {
    if ('if' in params && !params.if) return;
    if (params.disableAll) ctx.groups.disableAll();
    for (const name of params.disable ?? []) ctx.groups.disable(name);
    for (const name of params.enable ?? []) ctx.groups.enable(name);
  },
});
