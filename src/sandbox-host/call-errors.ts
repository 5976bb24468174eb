import type { SandboxLimits } from '../config/types.js';
import { Errors, type AnvilError } from '../errors.js';

export type BreachKind = 'cpu' | 'wall' | 'memory' | 'crash';

/** The error a call gets when it breached `kind` (or broke its sandbox, with the isolate's `text`). */
export function breachError(name: string, kind: BreachKind, limits: SandboxLimits, text: string): AnvilError {
  if (kind === 'cpu') return Errors.sandboxCpu(name, limits.cpuMs);
  if (kind === 'wall') return Errors.sandboxWall(name, limits.wallMs);
  if (kind === 'memory') return Errors.sandboxMemory(name, limits.memoryMb);
  return Errors.sandboxCrashed(name, text);
}

/** A call's end as the bootstrap reports it (undefined, or "<status> <message>") as the engine's error. */
export function outcomeError(outcome: string | undefined): AnvilError | null {
  if (typeof outcome !== 'string') return null;
  const space = outcome.indexOf(' ');
  const status = Number(outcome.slice(0, space));
  return Errors.directiveFailed(Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500, outcome.slice(space + 1));
}
