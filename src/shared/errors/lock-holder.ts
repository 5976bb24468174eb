/** Who holds a data directory, as its lock file says (its own module: the errors name it too). */
export interface LockHolder {
  pid: number;
  /** The process's start time in clock ticks since boot (Linux), so a reused PID is not taken for it. */
  processStart: string | null;
  startedAt: string;
  port: number | null;
  /** Tells this holding apart from any other, even of the same PID. */
  token: string;
}
