import { Errors } from '../errors.js';

/**
 * What one request makes the host hold, counted against the API's memory limit (api.yaml
 * `limits.memoryMb`, the same as its isolates'): values in request memory (a directive's
 * `memory.set`, a built-in's output such as Concat or a DatabaseQuery's rows) and the response
 * body. The isolate's own limit cannot see these: they live in the actor thread's heap, which all of
 * the thread's requests share. A value is counted where it is stored (a path of memory, the body);
 * storing again at the same place replaces its count. Crossing the limit fails the request (500,
 * logged as a memory breach) before the value is kept, never the cell.
 */
/** The place the response body is counted as. */
export const RESPONSE_BODY = 'the response body';

export class HostMemoryBudget {
  private held: Map<string, number> | null = null;
  private total = 0;
  /** Called on a breach with the places counted so far, to let go of what they hold. */
  onBreach: ((places: readonly string[]) => void) | null = null;

  constructor(readonly limitBytes: number) {}

  /**
   * Counts `value` as what `place` holds now. Over the limit: what was counted is let go of (the
   * request fails, and its error flow needs room to answer), then the breach is thrown.
   */
  charge(place: string, value: unknown): void {
    const before = this.held?.get(place) ?? 0;
    const room = this.limitBytes - (this.total - before);
    const bytes = hostBytes(value, room);
    if (bytes > room) {
      const places = [...(this.held?.keys() ?? [])];
      this.held = null;
      this.total = 0;
      this.onBreach?.(places);
      throw Errors.hostMemory(place, Math.round(this.limitBytes / 2 ** 20));
    }
    this.held ??= new Map();
    this.held.set(place, bytes);
    this.total += bytes - before;
  }
}

/** Walking stops after this many values: a value that big (or a shared-reference bomb) is too big. */
const MAX_VALUES = 1_000_000;

/**
 * Roughly what a value costs the host: strings by length, buffers by size, 8 bytes per number and
 * per slot, plus the keys of objects; a frozen object (the release's Maps, static parameters) is
 * shared by every request and costs a reference. Stops as soon as the count passes `cap` (then returns a
 * figure above it), so measuring a huge value costs no more than measuring `cap` bytes of it.
 */
export function hostBytes(value: unknown, cap: number): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return 8;
  let bytes = 0;
  let visited = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (++visited > MAX_VALUES) return Infinity;
    if (typeof node === 'string') bytes += node.length + 16;
    // Frozen values are the release's own (Maps, static parameters), shared by every request.
    else if (node === null || typeof node !== 'object' || Object.isFrozen(node)) bytes += 8;
    else if (Buffer.isBuffer(node) || ArrayBuffer.isView(node)) bytes += node.byteLength + 64;
    else if (Array.isArray(node)) {
      bytes += 16 + 8 * node.length;
      if (bytes > cap) return bytes;
      for (const item of node) stack.push(item);
    } else {
      bytes += 32;
      for (const key in node) {
        if (!Object.hasOwn(node, key)) continue;
        bytes += key.length + 16;
        stack.push((node as Record<string, unknown>)[key]);
      }
    }
    if (bytes > cap) return bytes;
  }
  return bytes;
}
