import { isoTime } from '../logs/iso-time.js';
import { defineDirective, noParams } from './types.js';

export default defineDirective({
  name: 'Log',
  summary: "Appends one JSON line per request to the API's log (logs/YYYY-MM-DD.jsonl in its data dir, rotated and pruned under the API's log quotas).",
  memory: { reads: ['correlationId'] },
  params: noParams,
  run(ctx) {
    const status = ctx.sent?.status ?? ctx.message.status;
    ctx.api.requestLog.append({
      time: isoTime(Date.now()),
      id: ctx.request.id,
      verb: ctx.request.verb,
      path: ctx.request.path,
      route: `${ctx.request.definitionVerb} ${ctx.request.definitionPath}`,
      status,
      durationMs: Math.round((performance.timeOrigin + performance.now() - ctx.request.receivedAt) * 1000) / 1000,
      correlationId: ctx.memory.get('correlationId'),
      release: ctx.api.release,
      entries: ctx.trace.map((step) => (step.pass === 'after' ? `${step.label} (after)` : step.label)),
      errors: ctx.trace
        .filter((step) => step.error !== undefined)
        .map((step) => ({ label: step.label, directive: step.directive, ...step.error })),
    });
  },
});
