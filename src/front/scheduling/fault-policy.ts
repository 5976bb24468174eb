/**
 * What the router does when tenant code kills a cell (SPEC §10, ARCHITECTURE.md). The culprit is
 * the API whose custom directive was running when the cell died (the cell's marker file says which,
 * see cell/process/sandbox-markers.ts), or the API whose stuck thread the router killed the cell for. Only
 * when neither is known (the cell was killed from outside, or died outside tenant code) are the APIs
 * that lost work in it suspected, as the best guess. A culprit is moved into a cell of its own
 * (quarantine); a culprit that kills its own cell again is paused, answering 503 with a growing
 * `retry-after`, before it may try again in a new quarantine cell.
 *
 * Records are keyed by `formatApiId` and keep the API's parts (`api`), which is what the callers
 * get back: nothing is read back out of the key.
 */
import { apiIdOf, formatApiId, type ApiId } from '../../shared/protocol/api-id.js';
import type { FaultDecision } from './fault-board.js';

export interface QuarantineRecord {
  readonly api: ApiId;
  /** The quarantine cell of an API; null while it has none (reaped while idle, or paused). */
  cell: number | null;
  /** Times it killed its quarantine cell. */
  strikes: number;
  /** Paused until then (ms since epoch); 0 when not paused. */
  pausedUntil: number;
  /** When a request for it last arrived (ms since epoch). */
  lastUsed: number;
}

export type FaultVerdict = { action: 'quarantine' } | { action: 'pause'; forMs: number };

const FIRST_PAUSE_MS = 1_000;
const MAX_PAUSE_MS = 5 * 60_000;
/** A link that closed with work this long before its cell's death points at a suspect. */
const SUSPECT_WINDOW_MS = 5_000;

export class FaultPolicy {
  private readonly placements = new Map<string, QuarantineRecord>();
  /** API → cell and time of the last thread of that API lost with requests in flight. */
  private readonly suspects = new Map<string, { api: ApiId; cell: number; at: number; certain: boolean }>();

  /** Told of each quarantine and pause decided here (not of those adopted from other instances). */
  decided: (api: ApiId, decision: FaultDecision) => void = () => {};

  /** The quarantine placement of an API, or undefined (it lives where hashing puts it). */
  placement(api: ApiId): QuarantineRecord | undefined {
    // Most instances never quarantine anything: no id is formatted for each request then.
    return this.placements.size === 0 ? undefined : this.placements.get(formatApiId(api));
  }

  /** A request for the API arrived: milliseconds it stays paused (0: not paused). */
  admit(api: ApiId, now: number): number {
    const placement = this.placement(api);
    if (placement === undefined) return 0;
    placement.lastUsed = now;
    return Math.max(0, placement.pausedUntil - now);
  }

  /** A thread of this API went away with requests in flight (`certain`: the router killed its cell for it). */
  noteLostWork(api: ApiId, cell: number, now: number, certain = false): void {
    const id = formatApiId(api);
    const known = this.suspects.get(id);
    this.suspects.set(id, {
      api: known?.api ?? apiIdOf(api),
      cell,
      at: now,
      certain: certain || (known !== undefined && known.cell === cell && known.certain),
    });
  }

  /**
   * The APIs to blame for the death of `cell`, each with what happens to it. `running`: the APIs
   * whose directives were running in it when it died (its marker file), each once.
   */
  judge(cell: number, now: number, running: readonly ApiId[]): Array<{ api: ApiId; verdict: FaultVerdict }> {
    return this.blame(cell, now, running).apis.map((api) => ({ api, verdict: this.verdict(api, cell, now) }));
  }

  /**
   * The APIs to blame for the death of `cell` (as `judge`, without the verdicts): `certain` when
   * they were running tenant code or the router killed the cell for them, not when suspected.
   */
  blame(cell: number, now: number, running: readonly ApiId[]): { apis: ApiId[]; certain: boolean } {
    const lost: ApiId[] = [];
    const certain: ApiId[] = [];
    for (const [id, suspect] of this.suspects) {
      if (suspect.cell !== cell) continue;
      this.suspects.delete(id);
      if (now - suspect.at > SUSPECT_WINDOW_MS) continue;
      lost.push(suspect.api);
      if (suspect.certain) certain.push(suspect.api);
    }
    if (running.length > 0) return { apis: [...running], certain: true };
    return certain.length > 0 ? { apis: certain, certain: true } : { apis: lost, certain: false };
  }

  /** What happens to an API blamed for the death of `cell`: quarantine, or a pause when it was its quarantine cell. */
  verdict(api: ApiId, cell: number, now: number): FaultVerdict {
    const placement = this.placement(api);
    if (placement === undefined || placement.cell !== cell) {
      this.decided(api, { strikes: placement?.strikes ?? 0, pausedForMs: 0 });
      return { action: 'quarantine' };
    }
    placement.strikes++;
    const forMs = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** (placement.strikes - 1));
    placement.pausedUntil = now + forMs;
    this.decided(api, { strikes: placement.strikes, pausedForMs: forMs });
    return { action: 'pause', forMs };
  }

  /**
   * Another instance's decision: the API is quarantined here too (without a cell: its next request
   * starts one), counts the greater of both instances' strikes, and is paused for what is left of
   * that pause when it ends later than its own. What it changed here, if anything.
   */
  adopt(api: ApiId, decision: FaultDecision, now: number): 'quarantined' | 'paused' | null {
    let placement = this.placement(api);
    const quarantined = placement === undefined;
    if (placement === undefined)
      this.placements.set(
        formatApiId(api),
        (placement = { api: apiIdOf(api), cell: null, strikes: 0, pausedUntil: 0, lastUsed: now }),
      );
    placement.strikes = Math.max(placement.strikes, decision.strikes);
    const until = now + decision.pausedForMs;
    if (decision.pausedForMs > 0 && until > placement.pausedUntil) {
      const wasPaused = placement.pausedUntil > now;
      placement.pausedUntil = until;
      if (!wasPaused) return 'paused';
    }
    return quarantined ? 'quarantined' : null;
  }

  /** The API lives in quarantine, in `cell` (null: none yet; one is started when it gets work). */
  place(api: ApiId, cell: number | null, now: number): void {
    const placement = this.placement(api);
    if (placement === undefined)
      this.placements.set(formatApiId(api), { api: apiIdOf(api), cell, strikes: 0, pausedUntil: 0, lastUsed: now });
    else placement.cell = cell;
  }

  /** Every API in quarantine. */
  quarantined(): IterableIterator<QuarantineRecord> {
    return this.placements.values();
  }
}
