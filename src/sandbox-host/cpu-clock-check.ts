import ivm from 'isolated-vm';

const WAIT_MS = 20;

/**
 * Whether isolated-vm charges an isolate for time its thread only waited: a binary built without
 * the thread CPU clock (scripts/isolated-vm-cpu-clock.mjs says why, and rebuilds it at install).
 * With such a binary the CPU limit of custom directives counts time a thread waited for a core.
 */
export function isolateClockCountsWaiting(): boolean {
  const isolate = new ivm.Isolate({ memoryLimit: 8 });
  try {
    const context = isolate.createContextSync();
    const before = isolate.cpuTime;
    context.evalSync(`Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${WAIT_MS})`);
    return Number(isolate.cpuTime - before) / 1e6 > WAIT_MS / 2;
  } finally {
    isolate.dispose();
  }
}
