import type { Job } from './job.js';

/**
 * The requests a thread link has sent and not had answered, by request number. A number names a
 * slot, reused once its answer came, so a request adds no object and no hash-table entry that could
 * outlive it. (A Map of entries did: at 15 000 req/s its entries and tables lived long enough to be
 * moved to the old generation, and the collections of that generation paused the router.)
 */
export class InFlight {
  private readonly jobs: Array<Job | undefined> = [];
  private readonly sentAt: number[] = [];
  private readonly free: number[] = [];
  private count = 0;
  /** oldestSentAt's last answer and the `now` it was for (a scan per dispatch would cost O(slots)). */
  private oldest = Infinity;
  private oldestFor = -1;

  get size(): number {
    return this.count;
  }

  /** Holds `job`, sent at `now`; returns the request number it goes out with (1 or more). */
  add(job: Job, now: number): number {
    const slot = this.free.length > 0 ? this.free.pop()! : this.jobs.length;
    this.jobs[slot] = job;
    this.sentAt[slot] = now;
    this.count++;
    if (now < this.oldest) this.oldest = now;
    return slot + 1;
  }

  /** Removes and returns the job of request `number`; undefined if no such request is in flight. */
  take(number: number): Job | undefined {
    const slot = number - 1;
    if (!(slot >= 0 && slot < this.jobs.length)) return undefined;
    const job = this.jobs[slot];
    if (job === undefined) return undefined;
    this.jobs[slot] = undefined;
    this.free.push(slot);
    this.count--;
    if (this.sentAt[slot] === this.oldest) this.oldestFor = -1;
    return job;
  }

  /**
   * When the oldest request still in flight was sent (Infinity when none). The slots (as many as were
   * ever in flight at once) are scanned at most once per `now` unless the oldest one was answered.
   */
  oldestSentAt(now: number): number {
    if (now === this.oldestFor) return this.oldest;
    let oldest = Infinity;
    for (let slot = 0; slot < this.jobs.length; slot++) {
      if (this.jobs[slot] !== undefined && this.sentAt[slot]! < oldest) oldest = this.sentAt[slot]!;
    }
    this.oldest = oldest;
    this.oldestFor = now;
    return oldest;
  }

  /** Removes and returns every job in flight. */
  takeAll(): Job[] {
    const jobs: Job[] = [];
    for (let slot = 0; slot < this.jobs.length; slot++) {
      const job = this.jobs[slot];
      if (job === undefined) continue;
      jobs.push(job);
      this.jobs[slot] = undefined;
      this.free.push(slot);
    }
    this.count = 0;
    this.oldest = Infinity;
    return jobs;
  }
}
