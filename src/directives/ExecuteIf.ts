import { defineDirective } from '../engine/directive-types.js';

const OWN_PARAMS = ['if', 'execute'] as const;

/**
 * The original's ExecuteIf: when `if` is truthy (not null, false, 0 or ""), runs the directive
 * `execute` with every other parameter of the entry, as if it were this entry (its errors are this
 * entry's). A literal `execute` is checked at deploy time, its parameters against its schema; one
 * that comes from an alias is checked when it runs.
 */
export default defineDirective({
  name: 'ExecuteIf',
  // A directive named by an alias is known only per request: it may be any.
  localState: (params, keepsState) =>
    typeof params.execute !== 'string' || params.execute.startsWith('$') || keepsState(params.execute),
  summary: 'Runs the directive `execute` with the remaining parameters when `if` is truthy.',
  example: { if: '$.memory.isAdmin', execute: 'SetMemory', target: 'role', value: 'admin' },
  params: {
    type: 'object',
    properties: {
      if: {},
      execute: { type: 'string', minLength: 1 },
    },
    required: ['if', 'execute'],
    additionalProperties: true,
  },
  runs: { nameParam: 'execute', ownParams: OWN_PARAMS },
  async run(ctx, params) {
    if (!params.if) return;
    const rest: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(params)) {
      if (!(OWN_PARAMS as readonly string[]).includes(name)) rest[name] = value;
    }
    await ctx.runDirective(params.execute, rest, `ExecuteIf → ${params.execute}`);
  },
});
