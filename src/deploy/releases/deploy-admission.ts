/**
 * How many deploys each public host has under way (its upload being received, waiting for the
 * deploy worker, or in it), held to a bound: past it a host's next deploy is refused before a byte
 * of it is read, so one host cannot fill the router's temporary disk with uploads nor the queue
 * with work. Other hosts are not affected.
 */
/** The default of --max-queued-deploys: a CI job deploying a handful of APIs at once is not refused. */
export const DEFAULT_MAX_QUEUED_DEPLOYS = 8;

export class DeployAdmission {
  private readonly underWay = new Map<string, number>();

  constructor(readonly maxPerHost: number) {}

  /** A slot for one deploy of `host` (call the function when it is over), or null when the host has its bound under way. */
  enter(host: string): (() => void) | null {
    const current = this.underWay.get(host) ?? 0;
    if (current >= this.maxPerHost) return null;
    this.underWay.set(host, current + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const now = (this.underWay.get(host) ?? 1) - 1;
      if (now === 0) this.underWay.delete(host);
      else this.underWay.set(host, now);
    };
  }
}
