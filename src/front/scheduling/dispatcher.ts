import { performance } from 'node:perf_hooks';
import { DEFAULT_BUS_CALLS_PER_REQUEST } from '../../engine/call-budget.js';
import type { RoutedRequest } from '../../shared/protocol/requests.js';
import type { ActorSpec } from '../../shared/protocol/cell-messages.js';
import type { ActorTable } from './actor-table.js';
import { PendingRequest, RequestTimeouts, type Answer, type RequestOutcome } from './pending-request.js';
import { requestIdGenerator } from '../../shared/protocol/request-id.js';

/** Sees every request's end: its API, its outcome and how long it took (metrics, access log). */
export type RequestObserver = (
  spec: ActorSpec,
  request: RoutedRequest,
  outcome: RequestOutcome,
  seconds: number,
) => void;

/**
 * Turns a request for an API into a job for its actor, with the instance's request timeout; shared
 * by the HTTP front door, the in-process bus and the job runner.
 */
export class Dispatcher {
  private readonly timeouts: RequestTimeouts;
  readonly nextId = requestIdGenerator();

  constructor(
    private readonly actors: ActorTable,
    private readonly requestTimeoutMs: number,
    private readonly observe: RequestObserver = () => {},
    /** `--max-bus-calls`: the budget of bus calls a request from outside (a client's, a job's) starts with. */
    readonly busCallsPerRequest: number = DEFAULT_BUS_CALLS_PER_REQUEST,
  ) {
    this.timeouts = new RequestTimeouts(requestTimeoutMs);
  }

  /**
   * `read` turns the payload of the thread's Response frame into the answer `onDone` gets: decoded
   * (readResponse) for a client, or left as bytes with only status and route read
   * (readResponseBytes) for a bus answer the router forwards as it came.
   */
  submit<A extends Answer>(
    spec: ActorSpec,
    request: RoutedRequest,
    read: (responsePayload: Buffer) => A,
    onDone: (outcome: RequestOutcome<A>) => void,
  ): void {
    const startedAt = performance.now();
    const job = new PendingRequest(request, this.requestTimeoutMs, (end) => {
      const outcome: RequestOutcome<A> = end instanceof Uint8Array ? { ok: true, response: read(end) } : end;
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
