// Benchmarks that run the sandbox in their own process run it as a cell does: with the V8 flags the
// cells start with (CELL_V8_FLAGS, cell/process/cell-supervisor.ts), set before the first isolate is made.
// Import this module before anything that makes an isolate: a V8 flag set after the process started
// applies to the isolates made afterwards (isolated-vm's), not to this process's own, which is all
// these benchmarks need.
import v8 from 'node:v8';
import { CELL_V8_FLAGS } from '../../dist/cell/process/cell-supervisor.js';

for (const flag of CELL_V8_FLAGS) v8.setFlagsFromString(flag);
