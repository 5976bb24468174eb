// How an unpack fails, shared by its parts.
//
// Refusals are visible: one error per offending entry (`entry "../../x": path leaves the API
// folder`). Once an entry is refused we keep reading (to report every offender) but write
// nothing more; the whole unpack fails and `destDir` is cleaned up.

/** At most this many errors are listed; the rest are summarised in one line. */
const MAX_LISTED_ERRORS = 100;

export const quote = (p: string): string => JSON.stringify(p);

export class UnpackFailure {
  private readonly errors: string[] = [];
  private errorCount = 0;
  private status: 400 | 413 = 400;
  private isStopped = false;
  private isRejected = false;
  private readonly stop = new AbortController();

  /** `onStop` runs once, when `fail` stops the unpack (after `signal` is aborted). */
  constructor(private readonly onStop: () => void) {}

  /** Fatal: nothing more is read or written. */
  get stopped(): boolean {
    return this.isStopped;
  }

  /** An entry was refused: keep scanning to report every offender, but write nothing more. */
  get rejected(): boolean {
    return this.isRejected;
  }

  /** Aborted when the unpack stops. */
  get signal(): AbortSignal {
    return this.stop.signal;
  }

  /** Stops everything now. */
  fail(status: 400 | 413, message: string): void {
    if (this.isStopped) return;
    this.isStopped = true;
    this.status = status;
    this.addError(message);
    this.stop.abort();
    this.onStop();
  }

  /** Refuses one entry; the unpack will fail, but we go on reading to report every offender. */
  reject(entryPath: string, reason: string): void {
    this.isRejected = true;
    this.addError(`entry ${quote(entryPath)}: ${reason}`);
  }

  /** The failed result, if anything failed or was refused. */
  result(): { ok: false; status: 400 | 413; errors: string[] } | undefined {
    if (this.errorCount === 0) return undefined;
    const errors = [...this.errors];
    if (this.errorCount > errors.length) errors.push(`... and ${this.errorCount - errors.length} more errors`);
    return { ok: false, status: this.status, errors };
  }

  private addError(message: string): void {
    this.errorCount += 1;
    if (this.errors.length < MAX_LISTED_ERRORS) this.errors.push(message);
  }
}
