import { Errors, type AnvilError } from '../errors.js';
import type { EngineRequest, OutgoingResponse } from '../protocol/requests.js';
import { Fifo } from './fifo.js';

export type JobOutcome = { ok: true; response: OutgoingResponse } | { ok: false; error: AnvilError; retryAfter?: number };

/**
 * One request on its way to an actor and back. It ends exactly once: with the actor's response,
 * or with an error (mailbox full, timeout, cell died); whatever comes later is dropped.
 */
export class Job {
  done = false;
  readonly deadline: number;
  private pending: { request: EngineRequest; onDone: (outcome: JobOutcome) => void } | null;

  constructor(request: EngineRequest, timeoutMs: number, onDone: (outcome: JobOutcome) => void) {
    this.deadline = Date.now() + timeoutMs;
    this.pending = { request, onDone };
  }

  /** The request (read only while the job is not done: its holders skip done jobs). */
  get request(): EngineRequest {
    return this.pending!.request;
  }

  respond(response: OutgoingResponse): void {
    this.end({ ok: true, response });
  }

  fail(error: AnvilError, retryAfter?: number): void {
    this.end(retryAfter === undefined ? { ok: false, error } : { ok: false, error, retryAfter });
  }

  /**
   * A done job forgets its request and its callback (which holds the client's request and
   * response): the timeout queue keeps the job itself a while longer, and whatever it kept would
   * live through garbage collections and make each of them slower.
   */
  private end(outcome: JobOutcome): void {
    if (this.pending === null) return;
    const { onDone } = this.pending;
    this.pending = null;
    this.done = true;
    onDone(outcome);
  }
}

/**
 * Fails jobs that pass their deadline with 504. Every job has the same timeout, so arrival order is
 * deadline order: one queue, checked from its head, costs nothing per request but a push.
 *
 * Finished jobs leave the head of the queue as new ones come, not only when the timer sweeps: a job
 * the queue still holds when the young generation is collected is copied, and one held through two
 * collections is moved to the old generation. At 15 000 req/s with only the 100 ms sweep, 130 KB
 * were moved per young collection (4 KB with this), and the Mark-Compacts that followed every few
 * seconds paused the router 4-7 ms each: a burst of slow requests.
 */
export class JobTimeouts {
  private readonly queue = new Fifo<Job>();
  private readonly timer: NodeJS.Timeout;

  constructor(timeoutMs: number) {
    const every = Math.max(20, Math.min(100, Math.floor(timeoutMs / 10)));
    this.timer = setInterval(() => this.sweep(Date.now()), every);
    this.timer.unref();
  }

  watch(job: Job): void {
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
