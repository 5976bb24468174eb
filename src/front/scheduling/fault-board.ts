/**
 * Quarantine and pause decisions shared between instances (several instances behind a balancer,
 * on one Redis): an API that kills its cells on one instance is quarantined, then paused, on every
 * instance, for the same remaining time; so is a tenant (public host) whose APIs abort cells
 * (host-faults.ts): suspect, moved and paused everywhere. The Redis board is front/scheduling/redis-fault-board.ts; without
 * Redis an instance has none and decides alone.
 */
import type { ApiId } from '../../shared/protocol/api-id.js';

/** One instance's decision about an API, as the others adopt it. */
export interface FaultDecision {
  /** Times the API killed its quarantine cell, on any instance (the pause doubles with each). */
  strikes: number;
  /** How much of the pause is left, ms; 0: quarantined, not paused. */
  pausedForMs: number;
}

/** One instance's decision about a host (host-faults.ts), as the others adopt it. */
export interface HostFaultDecision {
  /** The host is suspect (its APIs that start now start in its quarantine cell): for good, once so. */
  suspect: boolean;
  /** All its APIs live in its quarantine cell. */
  moved: boolean;
  /** APIs of it that aborted cells since it was moved (the host's pause doubles with each). */
  strikes: number;
  /** How much of the host's pause is left, ms; 0: not paused. */
  pausedForMs: number;
}

export interface FaultBoard {
  /** A decision taken here, for every other instance. Never throws: what cannot be told now is told later. */
  tell(api: ApiId, decision: FaultDecision): void;
  /** `adopt` is called with the decisions of other instances (repeats included: adopting is idempotent). */
  listen(adopt: (api: ApiId, decision: FaultDecision) => void): void;
  /** A decision about a host taken here, for every other instance (as `tell`). */
  tellHost(host: Pick<ApiId, 'host' | 'env'>, decision: HostFaultDecision): void;
  /** `adopt` is called with the other instances' decisions about hosts (repeats included). */
  listenHosts(adopt: (host: Pick<ApiId, 'host' | 'env'>, decision: HostFaultDecision) => void): void;
  close(): void;
}
