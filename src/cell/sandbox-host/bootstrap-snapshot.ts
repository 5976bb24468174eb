import { readFileSync } from 'node:fs';
import ivm from 'isolated-vm';
import { codesCopy, type LockdownMode } from './sandbox-context.js';

const bootstrapSource = readFileSync(new URL('../../../sandbox/bootstrap.js', import.meta.url), 'utf8');

export interface BootstrapSnapshot {
  blob: ivm.ExternalCopy<ArrayBuffer>;
  lockdown: LockdownMode;
}

let made: BootstrapSnapshot | null = null;

/**
 * The bootstrap's snapshot, made once per thread (10–20 ms, the check included) and shared by the
 * isolates of every sandbox on it: a shared thread serves many APIs, each with its own isolate made
 * from it. Checked once, in a context made for that alone: a built-in a whole walk finds open after
 * the install means the lockdown's list of what V8 changes per context is not this V8's, and every
 * context is then walked whole (as before the snapshot froze anything), with a warning.
 */
export function bootstrapSnapshot(): BootstrapSnapshot {
  made ??= makeBootstrapSnapshot();
  return made;
}

/** A snapshot of the bootstrap, and of `more` scripts evaluated after it (tests), checked. */
export function makeBootstrapSnapshot(more: readonly string[] = []): BootstrapSnapshot {
  const blob = ivm.Isolate.createSnapshot([
    { code: bootstrapSource, filename: 'file:///anvil/bootstrap.js' },
    ...more.map((code) => ({ code })),
  ]);
  const open = openBuiltins(blob);
  if (open > 0) {
    process.emitWarning(
      `the sandbox's lockdown left ${open} built-in(s) open in a context made from its snapshot on this V8 (${process.versions.v8}); every context now freezes all its built-ins itself (slower, as safe)`,
    );
  }
  return { blob, lockdown: open === 0 ? 'snapshot' : 'thorough' };
}

/** The built-ins a whole walk finds open in a context of `blob` after the bootstrap's install. */
function openBuiltins(blob: ivm.ExternalCopy<ArrayBuffer>): number {
  const isolate = new ivm.Isolate({ memoryLimit: 16, snapshot: blob });
  try {
    const context = isolate.createContextSync();
    const host = new ivm.Callback(() => {
      throw new Error('the lockdown check calls nothing');
    });
    const open = context.evalClosureSync('return __anvilInstall($0, $1, $2, "check")', [host, codesCopy.copyInto(), 0]);
    if (typeof open !== 'number') throw new Error(`the bootstrap's lockdown check answered ${String(open)}`);
    return open;
  } finally {
    isolate.dispose();
  }
}
