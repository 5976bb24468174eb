import { formatApiId, type ApiId } from '../../shared/protocol/api-id.js';

/**
 * Which APIs are CPU-heavy right now. An API whose threads keep more than `heavyCores` of CPU busy
 * (their event loops and isolates, as the threads report every 2 s) with expensive requests (more
 * than `heavyMsPerRequest` of CPU each: a busy API of cheap requests is traffic, not a hog) runs in
 * the low-priority cell until it has been light for `holdMs`: the OS then gives the router and the
 * light APIs the CPU first, and the heavy API what is left — all of it when the machine is idle.
 */
export class CpuPlacement {
  /** API (formatApiId) → demoted until (ms since epoch). */
  private readonly demoted = new Map<string, number>();

  constructor(
    private readonly heavyCores: number,
    private readonly heavyMsPerRequest: number,
    private readonly holdMs: number,
  ) {}

  /** Notes an API's CPU use (in cores, and per request); true when this makes it heavy (it was not). */
  note(api: ApiId, cores: number, msPerRequest: number, now: number): boolean {
    if (cores < this.heavyCores || msPerRequest < this.heavyMsPerRequest) return false;
    const id = formatApiId(api);
    const was = this.isHeavyId(id, now);
    this.demoted.set(id, now + this.holdMs);
    return !was;
  }

  isHeavy(api: ApiId, now: number): boolean {
    return this.demoted.size > 0 && this.isHeavyId(formatApiId(api), now);
  }

  private isHeavyId(id: string, now: number): boolean {
    const until = this.demoted.get(id);
    if (until === undefined) return false;
    if (until > now) return true;
    this.demoted.delete(id);
    return false;
  }
}
