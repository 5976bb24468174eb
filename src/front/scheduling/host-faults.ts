/**
 * Blame per tenant (public host), beside the per-API blame of fault-policy.ts. Per-API quarantine
 * alone lets a tenant abort its neighbours' cell again with each API it deploys: a fresh key hashes
 * to a shared cell with no mark. So the aborts a host's APIs cause are counted for the host too:
 *
 * - its first abort: the host is suspect, for good (as a quarantined API stays quarantined). Its APIs
 *   that start from then on start in the host's quarantine cell, never in a shared one; those already
 *   running keep their cell (one abort is per-API business: the culprit alone is quarantined). Were
 *   suspicion to end, a fresh key deployed after each quiet spell would start in a shared cell and
 *   abort it again;
 * - `aborts` different APIs of the host aborting cells within `windowMs`: the host is moved, for
 *   good. All its APIs, running or not, live in its quarantine cell (those quarantined one by one
 *   stay in theirs);
 * - once moved, each further API of the host that aborts a cell pauses the whole host (every API of
 *   it answers 503 with `retry-after`), 1 s doubling to 5 min; a culprit quarantined alone is paused
 *   by per-API quarantine as before.
 *
 * Only a certain blame counts (the API whose directive was running, or the one the router killed
 * the cell for), never the guess made when a cell died of something else. The same API aborting
 * again counts once: it is quarantined and paused on its own.
 */
import { formatEnvId, type ApiId } from '../../shared/protocol/api-id.js';
import type { HostFaultDecision } from './fault-board.js';

/** A tenant: a public host in its env (it has one). */
export type HostId = Pick<ApiId, 'host' | 'env'>;

export interface HostFaultLimits {
  /** Different APIs of one host that abort cells within `windowMs` before the host is moved (--host-abort-limit). */
  aborts: number;
  /** How long an abort counts towards moving all the host's APIs (--host-abort-window); suspicion does not end. */
  windowMs: number;
}

export const DEFAULT_HOST_FAULT_LIMITS: HostFaultLimits = { aborts: 2, windowMs: 10 * 60_000 };

/** Where a host's APIs start: `new-apis` (suspect: those that start now) or `all-apis` (moved). */
export type HostStage = 'new-apis' | 'all-apis';

export interface HostPlacement {
  readonly host: string;
  readonly env: string;
  /** The host's quarantine cell; null while it has none (one starts when an API of it needs it). */
  cell: number | null;
  /** Keys of its APIs that aborted a cell → when they last did (older than the window: dropped). */
  readonly culprits: Map<string, number>;
  /** Its APIs that start start in its quarantine cell (it aborted a cell once): for good. */
  suspect: boolean;
  /** All its APIs live in its quarantine cell. */
  moved: boolean;
  /** APIs of it that aborted cells since it was moved, within the window (the pause doubles with each). */
  strikes: number;
  /** Every API of it paused until then (ms since epoch); 0 when not paused. */
  pausedUntil: number;
  /** When a request for an API of it last arrived (ms since epoch). */
  lastUsed: number;
}

/** What an abort changed for its host: suspect, moved, paused (for `forMs`), or nothing new. */
export type HostVerdict = { action: 'suspect' } | { action: 'move' } | { action: 'pause'; forMs: number } | null;

const FIRST_PAUSE_MS = 1_000;
const MAX_PAUSE_MS = 5 * 60_000;

export class HostFaults {
  private readonly hosts = new Map<string, HostPlacement>();

  /** Told of each decision taken here (not of those adopted from other instances). */
  decided: (host: HostId, decision: HostFaultDecision) => void = () => {};

  constructor(readonly limits: HostFaultLimits = DEFAULT_HOST_FAULT_LIMITS) {}

  /** The host's record, or undefined (it never aborted a cell here, nor was told of one). */
  placement(host: HostId): HostPlacement | undefined {
    return this.hosts.size === 0 ? undefined : this.hosts.get(formatEnvId(host));
  }

  /** Where the host's APIs start now; null: where hashing puts them. */
  stage(host: HostId, _now: number): HostStage | null {
    const placement = this.placement(host);
    if (placement === undefined) return null;
    if (placement.moved) return 'all-apis';
    return placement.suspect ? 'new-apis' : null;
  }

  /** A request for an API of the host arrived: milliseconds the host stays paused (0: not paused). */
  admit(host: HostId, now: number): number {
    const placement = this.placement(host);
    if (placement === undefined) return 0;
    placement.lastUsed = now;
    return Math.max(0, placement.pausedUntil - now);
  }

  /** `api`'s directive aborted a cell (a certain blame): what that changes for its host. */
  blame(api: ApiId, now: number): HostVerdict {
    const placement = this.record(api, now);
    for (const [key, at] of placement.culprits) if (now - at >= this.limits.windowMs) placement.culprits.delete(key);
    // A quiet window forgets the pauses' doubling (not the move).
    if (placement.culprits.size === 0) placement.strikes = 0;
    const again = placement.culprits.has(api.key);
    const wasSuspect = placement.suspect;
    placement.culprits.set(api.key, now);
    placement.suspect = true;
    let verdict: HostVerdict = null;
    if (again) verdict = null;
    else if (placement.moved) {
      placement.strikes++;
      const forMs = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** (placement.strikes - 1));
      placement.pausedUntil = Math.max(placement.pausedUntil, now + forMs);
      verdict = { action: 'pause', forMs };
    } else if (placement.culprits.size >= this.limits.aborts) {
      placement.moved = true;
      verdict = { action: 'move' };
    } else if (!wasSuspect) verdict = { action: 'suspect' };
    this.decided({ host: api.host, env: api.env }, this.decision(placement, now));
    return verdict;
  }

  /**
   * Another instance's decision about the host: suspect if either made it so, moved if either moved
   * it, paused until the later end, the greater strikes. What it changed here.
   */
  adopt(host: HostId, decision: HostFaultDecision, now: number): 'suspect' | 'moved' | 'paused' | null {
    const placement = this.record(host, now);
    const wasSuspect = placement.suspect || placement.moved;
    let changed: 'suspect' | 'moved' | 'paused' | null = null;
    placement.suspect ||= decision.suspect;
    placement.strikes = Math.max(placement.strikes, decision.strikes);
    if (decision.moved && !placement.moved) {
      placement.moved = true;
      changed = 'moved';
    } else if (!wasSuspect && placement.suspect) changed = 'suspect';
    const until = now + decision.pausedForMs;
    if (decision.pausedForMs > 0 && until > placement.pausedUntil) {
      const wasPaused = placement.pausedUntil > now;
      placement.pausedUntil = until;
      if (!wasPaused) changed = 'paused';
    }
    return changed;
  }

  /** The host's quarantine cell is `cell` (null: none, one is started when an API of it needs one). */
  place(host: HostId, cell: number | null): void {
    const placement = this.placement(host);
    if (placement !== undefined) placement.cell = cell;
  }

  /** Every host with a record. */
  all(): IterableIterator<HostPlacement> {
    return this.hosts.values();
  }

  /** The host's record, made (with nothing against it) if it has none. */
  private record(host: HostId, now: number): HostPlacement {
    const id = formatEnvId(host);
    let placement = this.hosts.get(id);
    if (placement === undefined) {
      placement = {
        host: host.host,
        env: host.env,
        cell: null,
        culprits: new Map(),
        suspect: false,
        moved: false,
        strikes: 0,
        pausedUntil: 0,
        lastUsed: now,
      };
      this.hosts.set(id, placement);
    }
    return placement;
  }

  private decision(placement: HostPlacement, now: number): HostFaultDecision {
    return {
      suspect: placement.suspect,
      moved: placement.moved,
      strikes: placement.strikes,
      pausedForMs: Math.max(0, placement.pausedUntil - now),
    };
  }
}
