import type { HostMemoryBudget } from './host-memory.js';

/**
 * Request memory: a plain tree of values addressed by dotted paths (`user.name`).
 * Static parameter values are frozen and shared between requests, so writes copy a frozen
 * object on the way down instead of mutating it. Objects made here have no prototype, so a key
 * such as `__proto__` is just a key.
 */
export class Memory {
  readonly data: Record<string, unknown>;

  /**
   * `initial`: taken over, not copied, when it has no prototype (the caller lets go of it).
   * `budget`: what values stored here count against (host-memory.ts); none for initial values.
   * `unset`: what a top-level key nobody set reads as (undefined: null, as any missing key).
   */
  constructor(
    initial: Record<string, unknown> = {},
    private readonly budget: HostMemoryBudget | null = null,
    private readonly unset: ((data: Readonly<Record<string, unknown>>, key: string) => unknown) | null = null,
  ) {
    // An object without a prototype is taken as it is (systemMemory makes one for each request).
    this.data =
      Object.getPrototypeOf(initial) === null
        ? initial
        : Object.assign(Object.create(null) as Record<string, unknown>, initial);
    if (budget !== null) {
      budget.onBreach = (places) => {
        for (const place of places) this.store(splitPath(place), null);
      };
    }
  }

  get(path: string | readonly string[]): unknown {
    // A top-level key (most reads: `correlationId`, a directive's target) needs no split.
    if (isTopKey(path)) return this.getTop(path);
    const parts = typeof path === 'string' ? splitPath(path) : path;
    const top = parts[0];
    if (this.unset !== null && top !== undefined && !Object.hasOwn(this.data, top)) {
      const value = this.unset(this.data, top);
      if (value !== undefined) return getPath(value, parts.slice(1));
    }
    return getPath(this.data, parts);
  }

  set(path: string | readonly string[], value: unknown): void {
    if (isTopKey(path)) {
      this.budget?.charge(path, value);
      // `data` has no prototype: assigning `__proto__` there makes an own key, as defineOwn would.
      this.data[path] = value;
      return;
    }
    const parts = typeof path === 'string' ? splitPath(path) : path;
    if (parts.length === 0) throw new TypeError('memory path is empty');
    this.budget?.charge(typeof path === 'string' ? path : parts.join('.'), value);
    this.store(parts, value);
  }

  private getTop(key: string): unknown {
    if (Object.hasOwn(this.data, key)) {
      const value = this.data[key];
      return value === undefined ? null : value;
    }
    if (this.unset !== null) {
      const value = this.unset(this.data, key);
      if (value !== undefined) return value;
    }
    return null;
  }

  private store(parts: readonly string[], value: unknown): void {
    let node: Record<string, unknown> = this.data;
    for (let i = 0; i < parts.length - 1; i++) {
      const key = parts[i]!;
      const next = Object.hasOwn(node, key) ? node[key] : undefined;
      let child: Record<string, unknown>;
      if (next !== null && typeof next === 'object' && !Array.isArray(next)) {
        child = Object.isFrozen(next)
          ? Object.assign(Object.create(null) as Record<string, unknown>, next)
          : (next as Record<string, unknown>);
      } else {
        child = Object.create(null) as Record<string, unknown>;
      }
      if (child !== next) defineOwn(node, key, child);
      node = child;
    }
    defineOwn(node, parts[parts.length - 1]!, value);
  }
}

/**
 * `node[key] = value` as an own property even where `node` is an ordinary object (a value stored
 * earlier, say a JSON body): an assignment to `__proto__` there would set its prototype instead.
 */
function defineOwn(node: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(node, key, { value, writable: true, enumerable: true, configurable: true });
}

/** A path of one key (no dot): read and written without splitting it. */
function isTopKey(path: string | readonly string[]): path is string {
  return typeof path === 'string' && path !== '' && !path.includes('.');
}

export function splitPath(path: string): string[] {
  return path === '' ? [] : path.split('.');
}

/** Reads a nested value; anything missing (or not an own property) is null, never a throw. */
export function getPath(root: unknown, parts: readonly string[]): unknown {
  let node: unknown = root;
  for (const key of parts) {
    if (node === null || typeof node !== 'object') return null;
    if (!Object.hasOwn(node, key)) return null;
    node = (node as Record<string, unknown>)[key];
  }
  return node === undefined ? null : node;
}
