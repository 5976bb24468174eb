import { Errors } from '../shared/errors.js';

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
  /** Bytes by place: a memory path as `m` + path, anything else (the body, headers, groups) as `x` + its name, so the two never meet. */
  private held: Map<string, number> | null = null;
  private total = 0;
  /** Called on a breach with the memory paths counted so far, to let go of what they hold. */
  onBreach: ((places: readonly string[]) => void) | null = null;

  constructor(readonly limitBytes: number) {}

  /**
   * Counts `value` as what the memory path `place` holds now (with the path itself: a key a
   * directive chose). Over the limit: what was counted is let go of (the request fails, and its
   * error flow needs room to answer), then the breach is thrown.
   */
  charge(place: string, value: unknown): void {
    this.count(`m${place}`, place, (room) => place.length + hostBytes(value, room));
  }

  /** As `charge`, for what the request holds outside its memory: the response body (RESPONSE_BODY). */
  chargeOther(place: string, value: unknown): void {
    this.count(`x${place}`, place, (room) => hostBytes(value, room));
  }

  /** As `chargeOther`, with a count kept by the caller (the headers or groups a directive set). */
  chargeOtherBytes(place: string, bytes: number): void {
    this.count(`x${place}`, place, () => bytes);
  }

  private count(key: string, place: string, measure: (room: number) => number): void {
    const before = this.held?.get(key) ?? 0;
    const room = this.limitBytes - (this.total - before);
    const bytes = measure(room);
    if (bytes > room) {
      const places = [...(this.held?.keys() ?? [])].filter((k) => k.startsWith('m')).map((k) => k.slice(1));
      this.held = null;
      this.total = 0;
      this.onBreach?.(places);
      throw Errors.hostMemory(
        place.length > 100 ? `${place.slice(0, 100)}…` : place,
        Math.round(this.limitBytes / 2 ** 20),
      );
    }
    this.held ??= new Map();
    this.held.set(key, bytes);
    this.total += bytes - before;
  }
}

/** Walking stops after this many values: a value that big (or a shared-reference bomb) is too big. */
const MAX_VALUES = 1_000_000;

/**
 * Roughly what a value costs the host: strings by length, buffers by size, 8 bytes per number and
 * per slot, plus the keys of objects; a frozen object (the release's Maps, static parameters) is
 * shared by every request and costs a reference. Every kind a copy out of an isolate can carry is
 * counted by what it holds (test/unit/host-memory.test.ts): Map and Set entries, an Error's
 * message and stack, a RegExp's source, an ArrayBuffer's bytes and, for a view (a typed array, a
 * DataView), all of its buffer's, which is what the copy carries; an array by its length, holes
 * included (checked before its elements are visited). Stops as soon as the count passes `cap` (then returns a figure
 * above it), so measuring a huge value costs no more than measuring `cap` bytes of it.
 */
export function hostBytes(value: unknown, cap: number): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return 8;
  let bytes = 0;
  let visited = 0;
  /** Buffers counted already: views of one buffer share it, in the copy too. */
  let buffers: Set<ArrayBufferLike> | null = null;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (++visited > MAX_VALUES) return Infinity;
    if (typeof node === 'string') bytes += node.length + 16;
    else if (typeof node === 'bigint') bytes += 16 + Math.ceil(node.toString(16).length / 2);
    // Frozen values are the release's own (Maps, static parameters), shared by every request.
    else if (node === null || typeof node !== 'object' || Object.isFrozen(node)) bytes += 8;
    else if (ArrayBuffer.isView(node) || node instanceof ArrayBuffer || node instanceof SharedArrayBuffer) {
      const buffer = ArrayBuffer.isView(node) ? node.buffer : node;
      buffers ??= new Set();
      bytes += 64 + (buffers.has(buffer) ? 0 : buffer.byteLength);
      buffers.add(buffer);
    } else if (Array.isArray(node)) {
      bytes += 16 + 8 * node.length;
      // Checked before its elements are visited: a sparse array of a huge length is refused at once.
      if (bytes > cap) return bytes;
      for (const item of node) stack.push(item);
    } else {
      bytes += 32;
      if (node instanceof Map) {
        bytes += 16 * node.size;
        if (bytes > cap) return bytes;
        for (const [k, v] of node) stack.push(k, v);
      } else if (node instanceof Set) {
        bytes += 8 * node.size;
        if (bytes > cap) return bytes;
        for (const item of node) stack.push(item);
      } else if (node instanceof RegExp) bytes += node.source.length;
      else if (node instanceof String) bytes += node.length;
      else if (node instanceof Error)
        stack.push(ownString(node, 'message'), ownString(node, 'stack'), ownString(node, 'name'));
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

/** An Error's own message, stack or name, or '' (a getter that throws, a value that is not a string). */
function ownString(error: Error, key: 'message' | 'stack' | 'name'): string {
  try {
    const value = Object.getOwnPropertyDescriptor(error, key)?.value;
    return typeof value === 'string' ? value : '';
  } catch {
    return '';
  }
}
