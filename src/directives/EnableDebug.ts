import { DebugTrace } from '../engine/debug-trace.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * The original's EnableDebug: from here on, every entry of the request (its AFTER_FLOW pass too) is
 * traced — the parameters it got and what it changed — and the trace is one line of the API's
 * request log (`"debug": true`) when the request is over. Credentials are hidden (see
 * src/shared/logs/redact.ts), and so is every header, parameter, memory key or body field named in
 * `redact`. A second EnableDebug in the same request changes nothing.
 */
export default defineDirective({
  name: 'EnableDebug',
  summary:
    "Traces every later entry of the request (parameters in, changes out) into one line of the API's log, secrets hidden; `redact` names more fields to hide.",
  example: { redact: ['ssn', 'iban'] },
  params: {
    type: 'object',
    properties: {
      redact: { type: 'array', items: { type: 'string', minLength: 1 } },
    },
    additionalProperties: false,
  },
  run(ctx, params) {
    if (ctx.stepWatcher !== null) return;
    ctx.stepWatcher = new DebugTrace(ctx, params.redact ?? []);
  },
});
