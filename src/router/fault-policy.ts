/**
 * What the router does when tenant code kills a cell (SPEC §10, ARCHITECTURE.md). The culprit is
 * the API whose custom directive was running when the cell died (the cell's marker file says which,
 * see cells/sandbox-markers.ts), or the API whose stuck thread the router killed the cell for. Only
 * when neither is known (the cell was killed from outside, or died outside tenant code) are the APIs
 * that lost work in it suspected, as the best guess. A culprit is moved into a cell of its own
 * (quarantine); a culprit that kills its own cell again is paused, answering 503 with a growing
 * `retry-after`, before it may try again in a new quarantine cell.
 */
export interface Placement {
  /** The quarantine cell of an API; null while it has none (reaped while idle, or paused). */
  cell: number | null;
  /** Times it killed its quarantine cell. */
  strikes: number;
  /** Paused until then (ms since epoch); 0 when not paused. */
  pausedUntil: number;
  /** When a request for it last arrived (ms since epoch). */
  lastUsed: number;
}

export type Verdict = { action: 'quarantine' } | { action: 'pause'; forMs: number };

const FIRST_PAUSE_MS = 1_000;
const MAX_PAUSE_MS = 5 * 60_000;
/** A link that closed with work this long before its cell's death points at a suspect. */
const SUSPECT_WINDOW_MS = 5_000;

export class FaultPolicy {
  private readonly placements = new Map<string, Placement>();
  /** identity → cell and time of the last thread of that API lost with requests in flight. */
  private readonly suspects = new Map<string, { cell: number; at: number; certain: boolean }>();

  /** The quarantine placement of an API, or undefined (it lives where hashing puts it). */
  placement(identity: string): Placement | undefined {
    return this.placements.get(identity);
  }

  /** A request for the API arrived: milliseconds it stays paused (0: not paused). */
  admit(identity: string, now: number): number {
    const placement = this.placements.get(identity);
    if (placement === undefined) return 0;
    placement.lastUsed = now;
    return Math.max(0, placement.pausedUntil - now);
  }

  /** A thread of this API went away with requests in flight (`certain`: the router killed its cell for it). */
  noteLostWork(identity: string, cell: number, now: number, certain = false): void {
    const known = this.suspects.get(identity);
    this.suspects.set(identity, { cell, at: now, certain: certain || (known !== undefined && known.cell === cell && known.certain) });
  }

  /**
   * The APIs to blame for the death of `cell`, each with what happens to it. `running`: the APIs
   * whose directives were running in it when it died (its marker file).
   */
  judge(cell: number, now: number, running: ReadonlySet<string>): Array<{ identity: string; verdict: Verdict }> {
    const lost: string[] = [];
    const certain: string[] = [];
    for (const [identity, suspect] of this.suspects) {
      if (suspect.cell !== cell) continue;
      this.suspects.delete(identity);
      if (now - suspect.at > SUSPECT_WINDOW_MS) continue;
      lost.push(identity);
      if (suspect.certain) certain.push(identity);
    }
    const blamed = running.size > 0 ? [...running] : certain.length > 0 ? certain : lost;
    return blamed.map((identity) => ({ identity, verdict: this.verdict(identity, cell, now) }));
  }

  private verdict(identity: string, cell: number, now: number): Verdict {
    const placement = this.placements.get(identity);
    if (placement === undefined || placement.cell !== cell) return { action: 'quarantine' };
    placement.strikes++;
    const forMs = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** (placement.strikes - 1));
    placement.pausedUntil = now + forMs;
    return { action: 'pause', forMs };
  }

  /** The API lives in quarantine, in `cell` (null: none yet; one is started when it gets work). */
  place(identity: string, cell: number | null, now: number): void {
    const placement = this.placements.get(identity);
    if (placement === undefined) this.placements.set(identity, { cell, strikes: 0, pausedUntil: 0, lastUsed: now });
    else placement.cell = cell;
  }

  /** Every API in quarantine. */
  quarantined(): IterableIterator<[string, Placement]> {
    return this.placements.entries();
  }
}
