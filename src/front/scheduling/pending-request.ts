import { Errors, type AnvilError } from '../../shared/errors.js';
import type { RoutedRequest } from '../../shared/protocol/requests.js';
import { Fifo } from './fifo.js';

/** What every answer is read for, whatever else its submitter reads of it: the metrics' labels. */
export interface Answer {
  status: number;
  route?: string;
}

/** A request the router answers itself (mailbox full, timeout, cell died). */
export interface RequestFailure {
  ok: false;
  error: AnvilError;
  retryAfter?: number;
}

/** How a request ended, its answer read as its submitter asked (see Dispatcher.submit). */
export type RequestOutcome<A extends Answer = Answer> = { ok: true; response: A } | RequestFailure;

/**
 * One request on its way to an actor and back. It ends exactly once: with the payload of the
 * thread's Response frame, or with an error (mailbox full, timeout, cell died); whatever comes later
 * is dropped. It does not read the payload: its submitter does (decoded for a client, only its
 * status and route for a bus answer that is forwarded as it came).
 */
export class PendingRequest {
  done = false;
  readonly deadline: number;
  private pending: { request: RoutedRequest; onEnd: (end: Buffer | RequestFailure) => void } | null;

  constructor(request: RoutedRequest, timeoutMs: number, onEnd: (end: Buffer | RequestFailure) => void) {
    this.deadline = Date.now() + timeoutMs;
    this.pending = { request, onEnd };
  }

  /** The request (read only while the job is not done: its holders skip done jobs). */
  get request(): RoutedRequest {
    return this.pending!.request;
  }

  /** The thread answered: the payload of its Response frame (a view into the chunk it came in). */
  answer(responsePayload: Buffer): void {
    this.end(responsePayload);
  }

  fail(error: AnvilError, retryAfter?: number): void {
    this.end(retryAfter === undefined ? { ok: false, error } : { ok: false, error, retryAfter });
  }

  /**
   * A done job forgets its request and its callback (which holds the client's request and
   * response): the timeout queue keeps the job itself a while longer, and whatever it kept would
   * live through garbage collections and make each of them slower.
   */
  private end(end: Buffer | RequestFailure): void {
    if (this.pending === null) return;
    const { onEnd } = this.pending;
    this.pending = null;
    this.done = true;
    onEnd(end);
  }
}

/**
 * Fails requests that pass their deadline with 504. Every request has the same timeout, so arrival order is
 * deadline order: one queue, checked from its head, costs nothing per request but a push.
 *
 * Finished requests leave the head of the queue as new ones come, not only when the timer sweeps: a request
 * the queue still holds when the young generation is collected is copied, and one held through two
 * collections is moved to the old generation. At 15 000 req/s with only the 100 ms sweep, 130 KB
 * were moved per young collection (4 KB with this), and the Mark-Compacts that followed every few
 * seconds paused the router 4-7 ms each: a burst of slow requests.
 */
export class RequestTimeouts {
  private readonly queue = new Fifo<PendingRequest>();
  private readonly timer: NodeJS.Timeout;

  constructor(timeoutMs: number) {
    const every = Math.max(20, Math.min(100, Math.floor(timeoutMs / 10)));
    this.timer = setInterval(() => this.sweep(Date.now()), every);
    this.timer.unref();
  }

  watch(job: PendingRequest): void {
    for (let head = this.queue.peek(); head !== undefined && head.done; head = this.queue.peek()) this.queue.shift();
    this.queue.push(job);
  }

  sweep(now: number): void {
    for (let job = this.queue.peek(); job !== undefined; job = this.queue.peek()) {
      if (!job.done && job.deadline > now) break;
      this.queue.shift();
      if (!job.done) job.fail(Errors.timeout());
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
