/**
 * When a thread's socket closes with requests in flight, the router cannot yet tell whether the
 * thread died alone or its whole cell is dying: the client already has its 502, but the cell's exit
 * (and with it the fault policy's verdict: quarantine or pause) comes a moment later. Were the
 * API's next request let through in that moment, it would be taken before the verdict: sent to
 * another thread of the API in the dying cell whose socket has not closed yet (a second 502), or
 * a thread start asked of the dying cell. So the actor takes no new work until one of these says
 * what happened:
 *
 * - its cell went down: the verdict has been given (and a paused API's waiting requests refused);
 * - the cell reported the thread's exit: the cell lives, the thread died alone;
 * - `waitMs` passed (a cell exit that never comes: the requests wait no longer than that).
 *
 * The cell's report of a thread's exit may come before the socket's close; the last few are kept
 * so that such a hold ends at once.
 */
export class VerdictHold {
  /** `<cell>#<thread>` of the threads whose fate is not known yet. */
  private readonly pending = new Set<string>();
  /** Thread exits reported before their sockets closed (a few, the oldest dropped first). */
  private readonly exited = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly waitMs: number,
    private readonly onRelease: () => void,
  ) {}

  get held(): boolean {
    return this.pending.size > 0;
  }

  /** A thread of the actor closed with requests in flight, in a cell the router believes alive. */
  threadLost(cell: number, thread: number): void {
    const id = threadId(cell, thread);
    if (this.exited.delete(id)) return;
    this.pending.add(id);
    this.timer ??= setTimeout(() => this.release(), this.waitMs).unref();
  }

  /** The cell reported that the thread exited: it is alive. */
  threadExited(cell: number, thread: number): void {
    const id = threadId(cell, thread);
    if (this.pending.delete(id)) {
      if (this.pending.size === 0) this.release();
      return;
    }
    this.exited.add(id);
    if (this.exited.size > REMEMBERED_EXITS) this.exited.delete(this.exited.values().next().value!);
  }

  /** The cell died and the router has given its verdict. */
  cellDown(cell: number): void {
    const prefix = `${cell}#`;
    for (const id of this.exited) if (id.startsWith(prefix)) this.exited.delete(id);
    if (this.pending.size === 0) return;
    for (const id of this.pending) if (id.startsWith(prefix)) this.pending.delete(id);
    if (this.pending.size === 0) this.release();
  }

  private release(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pending.clear();
    this.onRelease();
  }
}

const REMEMBERED_EXITS = 8;

function threadId(cell: number, thread: number): string {
  return `${cell}#${thread}`;
}
