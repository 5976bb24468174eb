/**
 * Which APIs are CPU-heavy right now. An API whose threads keep more than `heavyCores` of CPU busy
 * (their event loops and isolates, as the threads report every 2 s) with expensive requests (more
 * than `heavyMsPerRequest` of CPU each: a busy API of cheap requests is traffic, not a hog) runs in
 * the low-priority cell until it has been light for `holdMs`: the OS then gives the router and the
 * light APIs the CPU first, and the heavy API what is left — all of it when the machine is idle.
 */
export class CpuPlacement {
  /** identity → demoted until (ms since epoch). */
  private readonly demoted = new Map<string, number>();

  constructor(
    private readonly heavyCores: number,
    private readonly heavyMsPerRequest: number,
    private readonly holdMs: number,
  ) {}

  /** Notes an API's CPU use (in cores, and per request); true when this makes it heavy (it was not). */
  note(identity: string, cores: number, msPerRequest: number, now: number): boolean {
    if (cores < this.heavyCores || msPerRequest < this.heavyMsPerRequest) return false;
    const was = this.isHeavy(identity, now);
    this.demoted.set(identity, now + this.holdMs);
    return !was;
  }

  isHeavy(identity: string, now: number): boolean {
    const until = this.demoted.get(identity);
    if (until === undefined) return false;
    if (until > now) return true;
    this.demoted.delete(identity);
    return false;
  }
}
