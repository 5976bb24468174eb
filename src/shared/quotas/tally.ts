/**
 * Events an actor thread counts between two stats reports (quota refusals, log files removed): the
 * thread sends them with its stats (ThreadStats) and the router adds them to its metrics.
 */
export class Tally {
  private counts = new Map<string, number>();

  add(name: string, count = 1): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + count);
  }

  /** [name, count] since the last take, or undefined when nothing happened. */
  take(): Array<[string, number]> | undefined {
    if (this.counts.size === 0) return undefined;
    const taken = [...this.counts];
    this.counts = new Map();
    return taken;
  }
}
