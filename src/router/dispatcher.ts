import { performance } from 'node:perf_hooks';
import type { EngineRequest } from '../protocol/requests.js';
import type { ActorSpec } from '../protocol/cell-messages.js';
import type { ActorTable } from './actor-table.js';
import { Job, JobTimeouts, type JobOutcome } from './job.js';
import { requestIdGenerator } from '../protocol/request-id.js';

/** Sees every request's end: its API, its outcome and how long it took (metrics, access log). */
export type RequestObserver = (spec: ActorSpec, request: EngineRequest, outcome: JobOutcome, seconds: number) => void;

/**
 * Turns a request for an API into a job for its actor, with the instance's request timeout; shared
 * by the HTTP front door, the in-process bus and the job runner.
 */
export class Dispatcher {
  private readonly timeouts: JobTimeouts;
  readonly nextId = requestIdGenerator();

  constructor(
    private readonly actors: ActorTable,
    private readonly requestTimeoutMs: number,
    private readonly observe: RequestObserver = () => {},
  ) {
    this.timeouts = new JobTimeouts(requestTimeoutMs);
  }

  submit(spec: ActorSpec, request: EngineRequest, onDone: (outcome: JobOutcome) => void): void {
    const startedAt = performance.now();
    const job = new Job(request, this.requestTimeoutMs, (outcome) => {
      this.observe(spec, request, outcome, (performance.now() - startedAt) / 1000);
      onDone(outcome);
    });
    this.timeouts.watch(job);
    this.actors.dispatch(spec, job);
  }

  close(): void {
    this.timeouts.close();
  }
}
