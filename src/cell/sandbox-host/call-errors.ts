import type { SandboxLimits } from '../../shared/api-model/types.js';
import { Errors, type AnvilError } from '../../shared/errors.js';

export type BreachKind = 'cpu' | 'wall' | 'memory' | 'crash';

/** The error a call gets when it breached `kind` (or broke its sandbox, with the isolate's `text`). */
export function breachError(name: string, kind: BreachKind, limits: SandboxLimits, text: string): AnvilError {
  if (kind === 'cpu') return Errors.sandboxCpu(name, limits.cpuMs);
  if (kind === 'wall') return Errors.sandboxWall(name, limits.wallMs);
  if (kind === 'memory') return Errors.sandboxMemory(name, limits.memoryMb);
  return Errors.sandboxCrashed(name, text);
}

/** The author's `file:line:column` of a position in a directive's compiled code, or null. */
export type Locate = (directive: string, line: number, column: number) => string | null;

/**
 * A call's end as the bootstrap reports it (undefined, or "<status> <message>", with "\n@
 * <directive>:<line>:<column>" when a thrown error's stack said where) as the engine's error; the
 * position, mapped back to the author's file, ends the message.
 */
export function outcomeError(outcome: string | undefined, locate: Locate = () => null): AnvilError | null {
  if (typeof outcome !== 'string') return null;
  const space = outcome.indexOf(' ');
  const status = Number(outcome.slice(0, space));
  let message = outcome.slice(space + 1);
  const at = /\n@ ([^:\n]+):(\d+):(\d+)$/.exec(message);
  if (at !== null) {
    message = message.slice(0, at.index);
    const where = locate(at[1]!, Number(at[2]), Number(at[3]));
    if (where !== null) message += ` (at ${where})`;
  }
  return Errors.directiveFailed(Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500, message);
}
