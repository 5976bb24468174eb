import type { TraceStep } from '../engine/context.js';
import { isoTime } from '../shared/logs/iso-time.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'Log',
  summary:
    "Appends one JSON line per request to the API's log (logs/YYYY-MM-DD.jsonl in its data dir, rotated and pruned under the API's log quotas).",
  memory: { reads: ['correlationId'] },
  params: noParams,
  run(ctx) {
    const status = ctx.sent?.status ?? ctx.message.status;
    ctx.api.requestLog.append({
      time: isoTime(Date.now()),
      id: ctx.request.id,
      verb: ctx.request.verb,
      path: ctx.request.path,
      route: ctx.request.route,
      status,
      durationMs: Math.round((performance.timeOrigin + performance.now() - ctx.request.receivedAt) * 1000) / 1000,
      correlationId: ctx.memory.get('correlationId'),
      release: ctx.api.release,
      entries: entriesOf(ctx.trace),
      errors: errorsOf(ctx.trace),
    });
  },
});

function entriesOf(trace: readonly TraceStep[]): string[] {
  const entries = new Array<string>(trace.length);
  for (let i = 0; i < trace.length; i++) {
    const step = trace[i]!;
    entries[i] = step.pass === 'after' ? `${step.label} (after)` : step.label;
  }
  return entries;
}

/** Most requests have none: one shared empty list then. */
function errorsOf(trace: readonly TraceStep[]): ReadonlyArray<Record<string, unknown>> {
  let errors: Array<Record<string, unknown>> | null = null;
  for (const step of trace) {
    if (step.error !== undefined) (errors ??= []).push({ label: step.label, directive: step.directive, ...step.error });
  }
  return errors ?? NO_ERRORS;
}

const NO_ERRORS: ReadonlyArray<Record<string, unknown>> = Object.freeze([]);
