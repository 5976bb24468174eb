import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { RequestObserver } from '../scheduling/dispatcher.js';
import type { Metrics } from '../meters/metrics.js';

/** `ANVIL_ERR_MAILBOX_FULL` → `mailbox_full`: the reason label of a request the router answered. */
function failureReason(code: string): string {
  return code.replace(/^ANVIL_ERR_/, '').toLowerCase();
}

/** Router answers that mean something broke (not just load shedding): always logged. */
const LOGGED_FAILURES = new Set(['timeout', 'cell_died', 'actor_failed']);

/**
 * Counts every HTTP and bus request in the metrics (a queued job's run is counted by the queue, not
 * here) and logs it: each request at `debug` with its correlation id, a failure the router answered
 * at `warn`.
 */
export function requestObserver(metrics: Metrics, log: InstanceLog): RequestObserver {
  return (spec, request, outcome, seconds) => {
    if (request.job !== undefined) return;
    const status = outcome.ok ? outcome.response.status : outcome.error.status;
    const failure = outcome.ok ? null : failureReason(outcome.error.code);
    const route = outcome.ok ? (outcome.response.route ?? '') : '';
    metrics.observe({ host: spec.host, api: spec.key, route, status, failure, seconds });
    if (failure !== null && LOGGED_FAILURES.has(failure)) {
      log.warn(
        {
          event: 'request',
          correlationId: request.id,
          host: spec.host,
          api: spec.key,
          verb: request.verb,
          path: request.path,
          status,
          reason: failure,
          ms: Math.round(seconds * 1000),
        },
        `request failed: ${failure}`,
      );
    } else if (log.isLevelEnabled('debug')) {
      log.debug(
        {
          event: 'request',
          correlationId: request.id,
          host: spec.host,
          api: spec.key,
          route,
          verb: request.verb,
          path: request.path,
          status,
          ms: seconds * 1000,
          bus: request.viaBus,
        },
        'request',
      );
    }
  };
}
