import { describe, expect, it } from 'vitest';
import {
  bootstrapSnapshot,
  makeBootstrapSnapshot,
  type BootstrapSnapshot,
} from '../../src/cell/sandbox-host/bootstrap-snapshot.js';
import { ContextParts } from '../../src/cell/sandbox-host/sandbox-context.js';

// The sandbox's lockdown, frozen mostly in the thread's snapshot and finished in each context
// (sandbox/bootstrap.js builtinLockdown): what a directive's context holds once installed, walked
// by this test's own code, not the bootstrap's.

/** Evaluated in an installed context: every built-in reachable that is not frozen, and every global binding still writable. */
const OPEN_BUILTINS = `(() => {
  const { getOwnPropertyDescriptor, getPrototypeOf, isFrozen } = Object;
  const roots = [
    ['async function', getPrototypeOf(async function () {})], ['generator', getPrototypeOf(function* () {})],
    ['async generator', getPrototypeOf(async function* () {})], ['array iterator', getPrototypeOf([][Symbol.iterator]())],
    ['map iterator', getPrototypeOf(new Map().entries())], ['set iterator', getPrototypeOf(new Set().values())],
    ['string iterator', getPrototypeOf(''[Symbol.iterator]())], ['regexp string iterator', getPrototypeOf(/a/[Symbol.matchAll](''))],
    ['TypedArray', getPrototypeOf(Uint8Array)],
  ];
  const writable = [];
  for (const key of Reflect.ownKeys(globalThis)) {
    const d = getOwnPropertyDescriptor(globalThis, key);
    if ('value' in d) { roots.push([String(key), d.value]); if (d.writable || d.configurable) writable.push(String(key)); }
    else roots.push([String(key) + ' get', d.get], [String(key) + ' set', d.set]);
  }
  const open = [];
  const seen = new Set();
  while (roots.length > 0) {
    const [path, value] = roots.pop();
    if (value === null || (typeof value !== 'object' && typeof value !== 'function') || value === globalThis || seen.has(value)) continue;
    seen.add(value);
    if (!isFrozen(value)) open.push(path);
    roots.push([path + '.__proto__', getPrototypeOf(value)]);
    for (const key of Reflect.ownKeys(value)) {
      const d = getOwnPropertyDescriptor(value, key);
      if ('value' in d) roots.push([path + '.' + String(key), d.value]);
      else roots.push([path + '.' + String(key) + ' get', d.get], [path + '.' + String(key) + ' set', d.set]);
    }
  }
  return JSON.stringify({ walked: seen.size, open, writable });
})()`;

/** Evaluated into a snapshot after the bootstrap: an open object that only a frozen global leads to. */
const HOLDER = 'globalThis.Holder = Object.freeze({ inner: { open: true } });';

function installed(bootstrap: BootstrapSnapshot): {
  walked: number;
  open: string[];
  writable: string[];
  run: (code: string) => unknown;
  dispose: () => void;
} {
  const parts = ContextParts.make({
    memoryMb: 32,
    valueMaxBytes: 32 * 2 ** 20,
    snapshot: bootstrap.blob,
    lockdown: bootstrap.lockdown,
  });
  const found = JSON.parse(parts.context.evalSync(OPEN_BUILTINS) as string) as {
    walked: number;
    open: string[];
    writable: string[];
  };
  return { ...found, run: (code) => parts.context.evalSync(code), dispose: () => parts.dispose() };
}

describe('the sandbox lockdown', () => {
  it('on this V8 the snapshot holds the lockdown, and each context finishes it: every built-in frozen, every built-in binding read-only', () => {
    const bootstrap = bootstrapSnapshot();
    expect(bootstrap.lockdown).toBe('snapshot');
    const context = installed(bootstrap);
    try {
      expect(context.walked).toBeGreaterThan(600);
      expect(context.open).toEqual([]);
      expect(context.writable).toEqual([]);
      // What V8 adds or reopens when it makes a context from a snapshot is frozen too.
      for (const target of [
        'Array.prototype',
        'Array.prototype[Symbol.unscopables]',
        'RegExp.prototype',
        'Error',
        'ArrayBuffer.prototype',
        'Object.getPrototypeOf(Uint8Array.prototype)',
        'Intl.NumberFormat.prototype',
        'Intl.PluralRules.prototype',
      ]) {
        expect(context.run(`Object.isFrozen(${target})`), target).toBe(true);
      }
      expect(
        context.run(
          `'use strict'; try { RegExp.prototype.exec = () => null; 'assigned' } catch (e) { e.constructor.name }`,
        ),
      ).toBe('TypeError');
      expect(
        context.run(
          `'use strict'; try { Array.prototype.toSorted = () => []; 'assigned' } catch (e) { e.constructor.name }`,
        ),
      ).toBe('TypeError');
      // The override mistake stays fixed: an own property over a frozen prototype's.
      expect(
        context.run(
          `'use strict'; class E extends Error { constructor() { super('m'); this.name = 'E'; } } const a = []; a.push = 1; String(new E()) + ' ' + a.push + ' ' + Object.getOwnPropertyNames(Error.prototype).includes('name')`,
        ),
      ).toBe('E: m 1 true');
      expect(
        context.run(
          `'use strict'; let seen; Error.prepareStackTrace = () => 'mine'; seen = new Error('x').stack; Error.prepareStackTrace = undefined; seen`,
        ),
      ).toBe('mine');
    } finally {
      context.dispose();
    }
  });

  it('a snapshot whose lockdown leaves a built-in open behind a frozen one is caught once, and every context is then walked whole', async () => {
    // A frozen global that holds an open object: a context's walk stops at what is frozen, so only
    // the check's whole walk finds it.
    const warnings: string[] = [];
    const warn = (warning: Error): void => void warnings.push(warning.message);
    process.on('warning', warn);
    try {
      const bootstrap = makeBootstrapSnapshot([HOLDER]);
      expect(bootstrap.lockdown).toBe('thorough');
      const context = installed(bootstrap);
      try {
        expect(context.open).toEqual([]);
        expect(context.run('Object.isFrozen(Holder.inner)')).toBe(true);
      } finally {
        context.dispose();
      }
      await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on a later tick
      expect(warnings.join('\n')).toMatch(
        /left 1 built-in\(s\) open .* every context now freezes all its built-ins itself/,
      );
    } finally {
      process.off('warning', warn);
    }
  });

  it('without the check the gap would be real: a context that finishes only what is open leaves the held object open', () => {
    const bootstrap = makeBootstrapSnapshot([HOLDER]);
    const context = installed({ ...bootstrap, lockdown: 'snapshot' });
    try {
      expect(context.open).toEqual(['Holder.inner']);
    } finally {
      context.dispose();
    }
  });
});
