import ivm from 'isolated-vm';
import { describe, expect, it } from 'vitest';
import { isolateClockCountsWaiting } from '../../src/sandbox-host/cpu-clock-check.js';

// The CPU limit of custom directives reads isolated-vm's cpuTime. npm install rebuilds isolated-vm
// when its binary counts time the thread waited as CPU (scripts/isolated-vm-cpu-clock.mjs).
describe.runIf(process.platform === 'linux')('isolated-vm as installed', () => {
  it('charges an isolate for the CPU it used, not for the time its thread waited', () => {
    expect(isolateClockCountsWaiting()).toBe(false);
  });

  it('charges the CPU a loop used', () => {
    const isolate = new ivm.Isolate({ memoryLimit: 8 });
    try {
      const context = isolate.createContextSync();
      const before = isolate.cpuTime;
      const started = process.cpuUsage();
      context.evalSync('let x = 0; for (let i = 0; i < 2e7; i++) x += i;');
      const used = process.cpuUsage(started);
      const charged = Number(isolate.cpuTime - before) / 1e3;
      // The process's own CPU (µs) over the same span includes the isolate's: the charge is real CPU.
      expect(charged).toBeGreaterThan(1_000);
      expect(charged).toBeLessThanOrEqual(used.user + used.system + 1_000);
    } finally {
      isolate.dispose();
    }
  });
});
