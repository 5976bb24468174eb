import { LATENCY_BUCKETS } from './buckets.js';

/** What one slot of a ring counts; latency buckets (LATENCY_BUCKETS, +Inf last) follow FIELD.latency. */
export const FIELD = {
  requests: 0,
  /** Requests that ended with a status >= 500 (the API's, or the router's answer for it). */
  errors: 1,
  rateLimited: 2,
  breaches: 3,
  jobsFailed: 4,
  latency: 5,
} as const;

export const LATENCY_SLOTS = LATENCY_BUCKETS.length + 1;
export const FIELDS = FIELD.latency + LATENCY_SLOTS;

/**
 * A ring of fixed time slots (`slotSeconds` wide, `slots` of them) of plain counters: counting is a
 * few increments in a typed array, no allocation. A slot is zeroed when the clock comes back to it
 * with a newer tick, so a ring nobody writes to keeps its last figures until they age out of reads.
 */
export class SecondRing {
  private readonly counts: Uint32Array;
  /** The tick (seconds / slotSeconds) each slot holds; -1: never written. */
  private readonly ticks: Float64Array;

  constructor(
    readonly slotSeconds: number,
    readonly slots: number,
  ) {
    this.counts = new Uint32Array(slots * FIELDS);
    this.ticks = new Float64Array(slots).fill(-1);
  }

  /** The newest second written (0: never). */
  lastSecond = 0;

  /** One request that ended at `second` (unix seconds) with `status`, in latency bucket `bucket`. */
  request(second: number, status: number, bucket: number): void {
    const base = this.slot(second);
    const c = this.counts;
    c[base + FIELD.requests]!++;
    if (status >= 500) c[base + FIELD.errors]!++;
    else if (status === 429) c[base + FIELD.rateLimited]!++;
    c[base + FIELD.latency + bucket]!++;
  }

  /** `count` requests counted elsewhere (a thread's report), with their latency buckets. */
  requests(second: number, status: number, count: number, buckets: readonly number[]): void {
    const base = this.slot(second);
    const c = this.counts;
    c[base + FIELD.requests]! += count;
    if (status >= 500) c[base + FIELD.errors]! += count;
    else if (status === 429) c[base + FIELD.rateLimited]! += count;
    for (let b = 0; b < LATENCY_SLOTS && b < buckets.length; b++) c[base + FIELD.latency + b]! += buckets[b]!;
  }

  add(second: number, field: number, count: number): void {
    this.counts[this.slot(second) + field]! += count;
  }

  /** Adds every field of the slots within the last `seconds` ending at `now` into `into` (FIELDS long). */
  sum(now: number, seconds: number, into: Float64Array): void {
    const newest = Math.floor(now / this.slotSeconds);
    const oldest = newest - Math.ceil(seconds / this.slotSeconds) + 1;
    for (let i = 0; i < this.slots; i++) {
      const tick = this.ticks[i]!;
      if (tick < oldest || tick > newest) continue;
      const base = i * FIELDS;
      for (let f = 0; f < FIELDS; f++) into[f]! += this.counts[base + f]!;
    }
  }

  /** The fields of the slot holding `second`, or null when that slot holds another time (nothing counted then). */
  at(second: number): Uint32Array | null {
    const tick = Math.floor(second / this.slotSeconds);
    const i = tick % this.slots;
    if (this.ticks[i] !== tick) return null;
    return this.counts.subarray(i * FIELDS, (i + 1) * FIELDS);
  }

  private slot(second: number): number {
    if (second > this.lastSecond) this.lastSecond = second;
    const tick = Math.floor(second / this.slotSeconds);
    const i = tick % this.slots;
    const base = i * FIELDS;
    if (this.ticks[i] !== tick) {
      this.counts.fill(0, base, base + FIELDS);
      this.ticks[i] = tick;
    }
    return base;
  }
}
