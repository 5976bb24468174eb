/** Marks the slot of a call given up on: its answer may still come, so the slot is not reused yet. */
const GIVEN_UP = Symbol('given up');

/**
 * Calls sent over one framed connection and not answered yet, by call number. A number names a
 * slot, reused once the call's answer came, so a call adds no hash-table entry. (A Map with a set
 * and a delete per call had its tables moved to the old generation: a thread making bus calls at
 * saturation moved ~0.9 MB per young collection and ran Mark-Compacts.) A call given up on (timed
 * out) keeps its slot until its late answer arrives, so that answer never reaches a newer call.
 */
export class PendingCalls<T> {
  private readonly slots: Array<T | typeof GIVEN_UP | undefined> = [];
  private readonly free: number[] = [];
  private count = 0;

  /** Calls waiting for their answer (given-up ones not included). */
  get size(): number {
    return this.count;
  }

  /** Holds `call`; returns the number it goes out with (1 or more). */
  add(call: T): number {
    const slot = this.free.length > 0 ? this.free.pop()! : this.slots.length;
    this.slots[slot] = call;
    this.count++;
    return slot + 1;
  }

  /** The answer to call `number` came: removes and returns the call (undefined if none waits for it). */
  take(number: number): T | undefined {
    const slot = number - 1;
    if (!(slot >= 0 && slot < this.slots.length)) return undefined;
    const call = this.slots[slot];
    if (call === undefined) return undefined;
    this.slots[slot] = undefined;
    this.free.push(slot);
    if (call === GIVEN_UP) return undefined;
    this.count--;
    return call;
  }

  /** Stops waiting for call `number` (it timed out); its number stays taken until its answer comes. */
  giveUp(number: number): void {
    const slot = number - 1;
    const call = this.slots[slot];
    if (call === undefined || call === GIVEN_UP) return;
    this.slots[slot] = GIVEN_UP;
    this.count--;
  }

  /** Calls `fn` with each call still waiting and its number. */
  forEach(fn: (call: T, number: number) => void): void {
    for (let slot = 0; slot < this.slots.length; slot++) {
      const call = this.slots[slot];
      if (call !== undefined && call !== GIVEN_UP) fn(call, slot + 1);
    }
  }

  /** Removes and returns every call still waiting (the connection is gone: no answer will come). */
  takeAll(): T[] {
    const calls: T[] = [];
    for (let slot = 0; slot < this.slots.length; slot++) {
      const call = this.slots[slot];
      if (call === undefined) continue;
      if (call !== GIVEN_UP) calls.push(call);
      this.slots[slot] = undefined;
      this.free.push(slot);
    }
    this.count = 0;
    return calls;
  }
}
