/**
 * Which API's custom directive was running when a cell died. A fatal allocation in an isolate
 * aborts the whole cell process at once: no code of the cell runs after it, so it cannot say who
 * did it. Instead each actor thread keeps a flag in a file the router reads after the death: set
 * just before a sandbox stretch starts, cleared once the thread's event loop turns again. The file
 * has one slot per thread (the cell writes the thread's actor id into it when it starts the thread);
 * the router blames the actors whose flag is set, and no one else.
 *
 * A flag is one `pwrite` of one byte into the page cache (~1 µs; no one is woken): set at most once
 * per loop turn however many calls the turn runs, and cleared by one more. A flag may stay set a
 * little after its stretch returned (until the turn ends), never less: the API that aborted the
 * cell is always among the flagged. A shared thread has one slot for all its actors, holding the id
 * of the one that entered its sandbox last (SandboxMarker).
 */
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';

const SLOT_BYTES = 512;
/** [flag u8][id length u16 LE][id utf8…] */
const HEADER_BYTES = 3;
const ON = Buffer.from([1]);
const OFF = Buffer.from([0]);

/** The router's side: a fresh file before a cell starts, and what it says once the cell died. */
export const markerFile = {
  reset(path: string): void {
    writeFileSync(path, '');
  },
  /** Actor ids of the threads that were in (or had just left) a sandbox stretch. */
  flagged(path: string): string[] {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch {
      return [];
    }
    const ids = new Set<string>();
    for (let at = 0; at + HEADER_BYTES <= bytes.length; at += SLOT_BYTES) {
      if (bytes[at] !== 1) continue;
      const length = bytes.readUInt16LE(at + 1);
      if (length > 0 && at + HEADER_BYTES + length <= bytes.length)
        ids.add(bytes.toString('utf8', at + HEADER_BYTES, at + HEADER_BYTES + length));
    }
    return [...ids];
  },
};

/** The cell's side: a slot per running thread, named by its actor id. */
export class MarkerSlots {
  readonly fd: number;
  private readonly free: number[] = [];
  private next = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'r+');
  }

  /**
   * A slot for a thread of `actorId` (ids longer than a slot are cut: they are still unique enough
   * to match none), or for a shared thread (no id: its actors write theirs as they enter).
   */
  take(actorId = ''): number {
    const slot = this.free.pop() ?? this.next++;
    const record = encodeRecord(actorId, 0);
    writeSync(this.fd, record, 0, record.length, slot * SLOT_BYTES);
    return slot;
  }

  /** The thread is gone: its slot is blank and may be reused. */
  release(slot: number): void {
    writeSync(this.fd, Buffer.alloc(HEADER_BYTES), 0, HEADER_BYTES, slot * SLOT_BYTES);
    this.free.push(slot);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The marker flagged last on this thread. On a shared thread only one actor runs at a time: when
 * another enters its sandbox, the one before has left its own, and its flag is cleared at once, so
 * that a death blames the actor that was running, not every actor that ran in the same loop turn.
 */
let flaggedLast: SandboxMarker | null = null;
/** Whether the end of this turn is due to clear the flag (one clear per turn, not per stretch). */
let clearDue = false;

function clearAtTurnEnd(): void {
  if (clearDue) return;
  clearDue = true;
  setImmediate(() => {
    clearDue = false;
    flaggedLast?.clear();
  });
}

/**
 * An actor's flag: `enter()` before every sandbox stretch. A dedicated thread's actor has a slot of
 * its own, named by its id when the thread started: entering sets its flag byte. The actors of a
 * shared thread share the thread's slot: entering writes the whole record, flag and id, in one
 * `pwrite` — one write when the thread passes from one actor to the next, not a clear and a set.
 */
export class SandboxMarker {
  private flagged = false;
  private readonly offset: number;
  /** The slot's whole record with the flag set, when the slot is the thread's (shared): [1][id length][id]. */
  private readonly record: Buffer | null;

  constructor(
    private readonly fd: number,
    slot: number,
    /** The actor's id, when the slot is its shared thread's (the record is written on each entry). */
    sharedBy?: string,
  ) {
    this.offset = slot * SLOT_BYTES;
    this.record = sharedBy === undefined ? null : encodeRecord(sharedBy, 1);
  }

  readonly enter = (): void => {
    if (flaggedLast === this && this.flagged) return;
    const before = flaggedLast;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the thread's one slot remembers which marker flagged it last.
    flaggedLast = this;
    if (before !== null && before.flagged) {
      // Its record is overwritten by this one's (the thread's slot), or its own flag is cleared.
      if (this.record !== null && before.offset === this.offset) before.flagged = false;
      else before.clear();
    }
    if (this.record !== null) this.write(this.record);
    else this.write(ON);
    this.flagged = true;
    clearAtTurnEnd();
  };

  clear(): void {
    if (!this.flagged) return;
    this.write(OFF);
    this.flagged = false;
  }

  private write(bytes: Buffer): void {
    try {
      writeSync(this.fd, bytes, 0, bytes.length, this.offset);
    } catch {
      // Best effort: without the flag a death is judged as before (every API that lost work).
    }
  }
}

/** A slot's record: [flag][id length u16 LE][id utf8, cut to the slot]. */
function encodeRecord(actorId: string, flag: number): Buffer {
  const id = Buffer.from(actorId, 'utf8').subarray(0, SLOT_BYTES - HEADER_BYTES);
  const record = Buffer.alloc(HEADER_BYTES + id.length);
  record[0] = flag;
  record.writeUInt16LE(id.length, 1);
  id.copy(record, HEADER_BYTES);
  return record;
}
