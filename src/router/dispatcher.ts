import type { EngineRequest } from '../engine/api-engine.js';
import type { ActorSpec } from '../protocol/messages.js';
import type { ActorTable } from './actor-table.js';
import { Job, JobTimeouts, type JobOutcome } from './job.js';
import { requestIdGenerator } from './request-id.js';

/**
 * Turns a request for an API into a job for its actor, with the instance's request timeout; shared
 * by the HTTP front door and the in-process bus.
 */
export class Dispatcher {
  private readonly timeouts: JobTimeouts;
  readonly nextId = requestIdGenerator();

  constructor(
    private readonly actors: ActorTable,
    private readonly requestTimeoutMs: number,
  ) {
    this.timeouts = new JobTimeouts(requestTimeoutMs);
  }

  submit(spec: ActorSpec, request: EngineRequest, onDone: (outcome: JobOutcome) => void): void {
    const job = new Job(request, this.requestTimeoutMs, onDone);
    this.timeouts.watch(job);
    this.actors.dispatch(spec, job);
  }

  close(): void {
    this.timeouts.close();
  }
}
