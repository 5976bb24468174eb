/** One call of a custom directive as the sandbox (sandbox.ts) tracks it, and the arithmetic of its limits. */
import { performance } from 'node:perf_hooks';
import type { SandboxLimits } from '../../shared/api-model/types.js';
import type { DirectiveContext } from '../../engine/context.js';
import type { AnvilError } from '../../shared/errors.js';
import type { HostBridge } from './host-bridge.js';
import type { SandboxContext } from './sandbox-context.js';

/**
 * Stretch timeouts end on this grid (ms). isolated-vm gives every timed call a timer on a shared
 * timer thread, which wakes when each timer falls due, even long after its call returned: one
 * deadline per call meant one wake-up per call (measured: 9 µs of another thread's CPU per call at
 * 17 000 calls/s). Deadlines on a 10 ms grid fall due together. A runaway call is stopped at most
 * this much after its budget; the CPU and wall time a stretch used are checked when it returns.
 */
const TIMEOUT_GRID_MS = 10;

/** How deep `state.run` may nest custom directives (a directive that runs itself stops here, 508). */
export const MAX_NESTED_CALLS = 8;

/** As the bootstrap reports a call's end: undefined for success, "<status> <message>" for a failure. */
export type Outcome = string | undefined;

/**
 * The CPU and wall time of a call, shared with the custom directives it runs through `state.run`:
 * the limits are those of the whole chain, not of each call in it.
 */
export interface Budget {
  readonly startedAt: number;
  cpuNs: bigint;
}

export interface Call {
  readonly id: number;
  readonly name: string;
  readonly box: SandboxContext;
  readonly bridge: HostBridge;
  /** The request it runs for. */
  readonly ctx: DirectiveContext;
  readonly budget: Budget;
  /** The call whose `state.run` started this one (null for a call of the engine), and how deep it is. */
  readonly parent: Call | null;
  readonly depth: number;
  /** This call's own CPU time (for the per-directive figures); its limit is the budget's. */
  cpuNs: bigint;
  /**
   * The limit the host's work for the call (its SQL above all) took it past during a stretch: its
   * later state operations are refused, and the stretch ends in that breach.
   */
  hostOverrun: 'cpu' | 'wall' | null;
  /** How the call ended, once it has: no error, or the error the engine gets. */
  end: { error: AnvilError | null } | null;
  /** The engine's promise, once the call awaits. */
  waiter: { resolve(): void; reject(error: unknown): void } | null;
}

/** CPU time a stretch of the call used: its own, and its chain's. */
export function countCpu(call: Call, cpuNs: bigint): void {
  call.cpuNs += cpuNs;
  call.budget.cpuNs += cpuNs;
}

/** The limit the call is past, if any. */
export function overrun(call: Call, limits: SandboxLimits): 'cpu' | 'wall' | null {
  if (Number(call.budget.cpuNs) / 1e6 > limits.cpuMs) return 'cpu';
  if (performance.now() - call.budget.startedAt > limits.wallMs) return 'wall';
  return null;
}

/**
 * Milliseconds the call's code may run from `now` (performance.now()): what is left of its CPU and
 * of its wall time, rounded up to the timeout grid (see TIMEOUT_GRID_MS).
 */
export function timeoutOf(call: Call, limits: SandboxLimits, now: number): number {
  const left = Math.min(limits.cpuMs - Number(call.budget.cpuNs) / 1e6, limits.wallMs - (now - call.budget.startedAt));
  return Math.max(1, Math.ceil(left)) + TIMEOUT_GRID_MS - (Math.floor(now) % TIMEOUT_GRID_MS);
}
