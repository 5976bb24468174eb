import { Counter, type Registry } from 'prom-client';
import { LATENCY_BUCKETS } from '../../shared/metrics/buckets.js';
import { HistogramMeters, type ReportedHistogram } from './histogram-meters.js';

/** How a job run ended: done, failed and run again later, or failed for good (no retry left). */
export type JobOutcome = 'completed' | 'retried' | 'failed';

/**
 * The metrics of what happens around requests: deploys and release changes through the management
 * API, job outcomes, sandbox breaches, and the latency of outgoing calls (Http, Pull, Push).
 */
export class OperationMeters {
  readonly deploys: Counter<'host' | 'result'>;
  readonly releaseChanges: Counter<'host' | 'api' | 'change' | 'result'>;
  readonly jobRuns: Counter<'host' | 'api' | 'outcome'>;
  readonly sandboxBreaches: Counter<'host' | 'api' | 'kind'>;
  private readonly outgoingLatency: HistogramMeters;

  constructor(registry: Registry) {
    const registers = [registry];
    this.deploys = new Counter({
      name: 'anvil_deploys_total',
      help: 'Deploys through the management API (POST /anvil/api) by result: ok, invalid (400), too_large (413), queue_full (429, the host had --max-queued-deploys under way), failed (any other refusal)',
      labelNames: ['host', 'result'],
      registers,
    });
    this.releaseChanges = new Counter({
      name: 'anvil_release_changes_total',
      help: 'PUT /anvil/api/<key> by change (publish, disable, rollback to an older release, update) and result (ok, unknown_api, unknown_release)',
      labelNames: ['host', 'api', 'change', 'result'],
      registers,
    });
    this.jobRuns = new Counter({
      name: 'anvil_job_runs_total',
      help: 'Job runs by outcome: completed, retried (failed, will run again), failed (no retry left)',
      labelNames: ['host', 'api', 'outcome'],
      registers,
    });
    this.sandboxBreaches = new Counter({
      name: 'anvil_sandbox_breaches_total',
      help: "Custom directive calls that breached a sandbox limit (kind cpu, wall, memory) or broke their sandbox (crash), as the API's threads report them",
      labelNames: ['host', 'api', 'kind'],
      registers,
    });
    this.outgoingLatency = new HistogramMeters(
      registry,
      'anvil_outgoing_request_duration_seconds',
      "Outgoing HTTP requests of an API's Http, Pull and Push directives (not calls over the in-process bus): request sent to response read, failures included",
      LATENCY_BUCKETS,
    );
  }

  outgoing(host: string, api: string, reported: ReportedHistogram): void {
    this.outgoingLatency.add({ host, api }, reported);
  }

  /** `deployUpload`'s answer status → the result label. */
  static deployResult(ok: boolean, status: number): string {
    if (ok) return 'ok';
    if (status === 400) return 'invalid';
    if (status === 413) return 'too_large';
    if (status === 429) return 'queue_full';
    return 'failed';
  }
}
