import { performance } from 'node:perf_hooks';

/**
 * Time this thread spent running the statements of its APIs' SQLite databases, ms, a running
 * total (module state: one per actor thread). SQLite's work is native code nothing interrupts on
 * this thread (better-sqlite3 is built without a progress handler); the sandbox counts what a custom
 * directive's stretch added to it to the call's CPU time (sandbox.ts), so its SQL spends its budget.
 */
let spentMs = 0;

export function sqlTimeMs(): number {
  return spentMs;
}

/** Counts a statement that began at `startedAt` (performance.now()) and has just ended. */
export function countSqlTime(startedAt: number): void {
  spentMs += performance.now() - startedAt;
}
