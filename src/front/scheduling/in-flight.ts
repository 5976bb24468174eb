import { PendingCalls } from '../../shared/protocol/pending-calls.js';
import type { PendingRequest } from './pending-request.js';

/**
 * The requests a thread link has sent and not had answered, by request number, with when each was
 * sent. Numbers are reused slots (see PendingCalls), so a request adds no object and no hash-table
 * entry that could outlive it. (A Map of entries did: at 15 000 req/s its entries and tables lived
 * long enough to be moved to the old generation, and the collections of that generation paused the
 * router.) A request the router stopped waiting for (504) stays here until the thread answers it.
 */
export class InFlight {
  private readonly jobs = new PendingCalls<PendingRequest>();
  /** Send times, by request number − 1. */
  private readonly sentAt: number[] = [];
  /** oldestSentAt's last answer and the `now` it was for (a scan per dispatch would cost O(slots)). */
  private oldest = Infinity;
  private oldestFor = -1;

  get size(): number {
    return this.jobs.size;
  }

  /** Holds `job`, sent at `now`; returns the request number it goes out with (1 or more). */
  add(job: PendingRequest, now: number): number {
    const number = this.jobs.add(job);
    this.sentAt[number - 1] = now;
    if (now < this.oldest) this.oldest = now;
    return number;
  }

  /** Removes and returns the job of request `number`; undefined if no such request is in flight. */
  take(number: number): PendingRequest | undefined {
    const job = this.jobs.take(number);
    if (job !== undefined && this.sentAt[number - 1] === this.oldest) this.oldestFor = -1;
    return job;
  }

  /**
   * When the oldest request still in flight was sent (Infinity when none). The slots (as many as were
   * ever in flight at once) are scanned at most once per `now` unless the oldest one was answered.
   */
  oldestSentAt(now: number): number {
    if (now === this.oldestFor) return this.oldest;
    let oldest = Infinity;
    this.jobs.forEach((_job, number) => {
      const sentAt = this.sentAt[number - 1]!;
      if (sentAt < oldest) oldest = sentAt;
    });
    this.oldest = oldest;
    this.oldestFor = now;
    return oldest;
  }

  /** Removes and returns every job in flight. */
  takeAll(): PendingRequest[] {
    this.oldest = Infinity;
    return this.jobs.takeAll();
  }
}
