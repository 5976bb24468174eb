/**
 * One isolate task at a time per actor thread. isolated-vm runs each isolate on threads of its
 * own, so without this an API thread with several calls in flight could keep several cores busy
 * and starve its neighbours. A task is one synchronous stretch of a directive (its start, or its
 * continuation after an await); waiting for I/O holds nothing, so calls that await still overlap.
 */
export class CpuGate {
  private busy = false;
  private readonly queue: Array<() => void> = [];

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.busy) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.busy = true;
    try {
      return await task();
    } finally {
      const next = this.queue.shift();
      if (next !== undefined) next();
      else this.busy = false;
    }
  }
}
