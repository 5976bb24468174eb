/**
 * What the router does when tenant code kills a cell (SPEC §10, ARCHITECTURE.md): the APIs that had
 * requests in flight in the dead cell are suspects. A suspect is moved into a cell of its own
 * (quarantine); a suspect that kills its own cell again is paused, answering 503 with a growing
 * `retry-after`, before it may try again in that cell.
 */
export interface Placement {
  /** The quarantine cell of an API, if it has one. */
  cell: number;
  /** Times it killed its quarantine cell. */
  strikes: number;
  /** Paused until then (ms since epoch); 0 when not paused. */
  pausedUntil: number;
}

export type Verdict = { action: 'quarantine' } | { action: 'pause'; forMs: number };

const FIRST_PAUSE_MS = 1_000;
const MAX_PAUSE_MS = 5 * 60_000;
/** A link that closed with work this long before its cell's death points at a suspect. */
const SUSPECT_WINDOW_MS = 5_000;

export class FaultPolicy {
  private readonly placements = new Map<string, Placement>();
  /** identity → cell and time of the last thread of that API lost with requests in flight. */
  private readonly suspects = new Map<string, { cell: number; at: number }>();

  /** The quarantine cell of an API, or undefined (it lives where hashing puts it). */
  cellOf(identity: string): number | undefined {
    return this.placements.get(identity)?.cell;
  }

  /** Milliseconds the API stays paused (0: not paused). */
  pausedFor(identity: string, now: number): number {
    const placement = this.placements.get(identity);
    return placement === undefined ? 0 : Math.max(0, placement.pausedUntil - now);
  }

  /** A thread of this API went away (not retired) with requests in flight. */
  noteLostWork(identity: string, cell: number, now: number): void {
    this.suspects.set(identity, { cell, at: now });
  }

  /** The APIs to blame for the death of `cell`, each with what happens to it. */
  judge(cell: number, now: number): Array<{ identity: string; verdict: Verdict }> {
    const out: Array<{ identity: string; verdict: Verdict }> = [];
    for (const [identity, suspect] of this.suspects) {
      if (suspect.cell !== cell || now - suspect.at > SUSPECT_WINDOW_MS) continue;
      this.suspects.delete(identity);
      const placement = this.placements.get(identity);
      if (placement !== undefined && placement.cell === cell) {
        placement.strikes++;
        const forMs = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** (placement.strikes - 1));
        placement.pausedUntil = now + forMs;
        out.push({ identity, verdict: { action: 'pause', forMs } });
      } else {
        out.push({ identity, verdict: { action: 'quarantine' } });
      }
    }
    return out;
  }

  quarantine(identity: string, cell: number): void {
    this.placements.set(identity, { cell, strikes: 0, pausedUntil: 0 });
  }
}
