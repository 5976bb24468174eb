// What one synchronous call into an isolate costs with the installed isolated-vm binary, without a
// host callback and with two (bench/notes/isolate-cpu-clock.md compares a binary built with the
// thread CPU clock). Not part of `npm run bench`: run it by hand, once per binary.
//
//   node bench/isolate-clock-cost.mjs
import ivm from 'isolated-vm';
import { performance } from 'node:perf_hooks';

const CALLS = 100_000;
const isolate = new ivm.Isolate({ memoryLimit: 16 });
const context = isolate.createContextSync();
const host = new ivm.Callback(() => 1);
const run = context.evalClosureSync(
  'return (n) => { let s = 0; for (let k = 0; k < n; k++) s += $0(); return s; }',
  [host],
  { result: { reference: true } },
);

for (const callbacks of [0, 2]) {
  for (let k = 0; k < CALLS / 5; k++) run.applySync(undefined, [callbacks], { timeout: 1000 });
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let k = 0; k < CALLS; k++) run.applySync(undefined, [callbacks], { timeout: 1000 });
  const used = process.cpuUsage(cpu);
  const wallUs = ((performance.now() - started) * 1000) / CALLS;
  console.log(
    `${callbacks} host callbacks: ${wallUs.toFixed(2)} µs wall, ${((used.user + used.system) / CALLS).toFixed(2)} µs CPU per call`,
  );
}

// An isolate that only waits: charged ~0 with the thread CPU clock, the whole wait without it.
const before = isolate.cpuTime;
context.evalSync('Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100)');
console.log(`a 100 ms Atomics.wait is charged ${(Number(isolate.cpuTime - before) / 1e6).toFixed(1)} ms of CPU`);
