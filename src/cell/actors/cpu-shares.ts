import { performance } from 'node:perf_hooks';
import { BusyReason } from '../../shared/protocol/busy-reasons.js';
import { threadCpuClock, type ThreadCpuClock } from '../sandbox-host/thread-cpu-clock.js';

/** The window the thread's CPU share is taken over (long beside schedstat's 4 ms steps). */
export const BUSY_WINDOW_MS = 100;
/**
 * The share of one core from which the thread is busy. Not lower: at 0.8 over 50 ms a saturated
 * ReadUser endpoint (one thread at ~75 % of a core, on average) started its second thread by
 * chance, for 2–6 µs more cell CPU per request and no more throughput.
 */
export const BUSY_SHARE = 0.9;
/**
 * On a busy shared thread, an actor that ran at least this share of its actors' timed code, and
 * its own code for at least MIN_OWN_SHARE of the window, is the one making it busy (not one that
 * ran a single call of a millisecond while the thread mostly did untimed work).
 */
export const DOMINANT_SHARE = 0.5;
export const MIN_OWN_SHARE = 0.2;
/**
 * One stretch of an actor's own code this long on a shared thread counts against it at the next
 * look (when the thread did use that much CPU meanwhile: a stretch may be long because the OS ran
 * something else): the others on the thread waited that long for it.
 */
export const LONG_STRETCH_MS = 20;
/**
 * On a shared thread, an actor is busy when it was seen so twice within this long (dominant in a
 * busy window, or a long stretch): once may be its first request (its isolate made, its directives
 * compiled) or a garbage collection of the thread that happened to fall in its stretch.
 */
export const REPEAT_WITHIN_MS = 2_000;
/** The CPU clock is read at most this often to share out what it says. */
const SHARE_EVERY_MS = 500;

/** What CpuShares needs of an actor. */
export interface CpuSharer {
  sayBusy(reason: BusyReason): void;
}

interface Account {
  /** Wall ms of its stretches since its last report, and within the current busy window. */
  sinceReport: number;
  inWindow: number;
  reportedAt: number;
  /** Its longest stretch in the current busy window, ms. */
  longest: number;
  /** When it was last seen busy on a shared thread (REPEAT_WITHIN_MS); -Infinity: never. */
  seenBusyAt: number;
}

/**
 * The CPU of one actor thread, shared out between the actors it serves: each actor is timed while
 * its own code runs synchronously (the frames it receives, the requests it starts), and the
 * thread's CPU clock is shared out in proportion to those times, so that what the actors report
 * adds up to what the thread used — CPU, not time spent waiting for a core — and the continuations
 * no one was timed in are shared out too. One actor: all of the thread's CPU is its own.
 *
 * It also says who keeps the thread busy (its API gets threads of its own, front/scheduling/actor-handle.ts):
 * read as work arrives, at most once per BUSY_WINDOW_MS, the thread's CPU over the window; from
 * BUSY_SHARE of a core, the actor that ran DOMINANT_SHARE of the window's code (none when many
 * share the work evenly: that is the shared thread doing its job). A thread the router keeps fed
 * with quick requests has many in flight while using half a core, and a second thread then only
 * costs more per request (bench/notes/custom-directive-profile.md): CPU, not requests in flight.
 * Off Linux, with no per-thread CPU clock, the timed stretches stand in for it.
 */
export class CpuShares {
  private readonly accounts = new Map<CpuSharer, Account>();
  private factor = 1;
  private sharedAt: number;
  private cpuAtShare: bigint;
  private timedSinceShare = 0;
  private windowStart: number;
  private cpuAtWindow: bigint;
  private timedInWindow = 0;

  constructor(
    /** A shared thread (long stretches count); a dedicated one serves one actor. */
    private readonly shared: boolean,
    private readonly clock: ThreadCpuClock | null = threadCpuClock(),
    now = performance.now(),
  ) {
    this.sharedAt = now;
    this.windowStart = now;
    this.cpuAtShare = this.cpuAtWindow = clock?.read() ?? 0n;
  }

  get actors(): number {
    return this.accounts.size;
  }

  join(actor: CpuSharer, now = performance.now()): void {
    this.accounts.set(actor, { sinceReport: 0, inWindow: 0, reportedAt: now, longest: 0, seenBusyAt: -Infinity });
  }

  leave(actor: CpuSharer): void {
    this.accounts.delete(actor);
  }

  /**
   * `actor`'s code ran for `ms` (wall time, synchronously), `sandboxMs` of it CPU its custom
   * directives were charged (isolate time, bounded by the thread's CPU: its own for certain). On a
   * shared thread, LONG_STRETCH_MS of that makes it busy at once.
   */
  ran(actor: CpuSharer, ms: number, sandboxMs = 0, now = performance.now()): void {
    if (this.shared && sandboxMs >= LONG_STRETCH_MS) actor.sayBusy(BusyReason.LongSandboxCall);
    const account = this.accounts.get(actor);
    if (account === undefined) return;
    account.sinceReport += ms;
    account.inWindow += ms;
    this.timedSinceShare += ms;
    this.timedInWindow += ms;
    if (this.shared && ms >= LONG_STRETCH_MS) {
      const own = this.ownAtLeast(ms, now);
      if (own >= LONG_STRETCH_MS) account.longest = Math.max(account.longest, own);
    }
  }

  /**
   * The least CPU a stretch of `ms` that just ended used: all the time the thread spent off its core
   * since the window began may have fallen inside it. On a saturated shared thread beside busier
   * threads a stretch of a quick API's code was sometimes 20 ms long by the wall clock, preempted,
   * and the API got threads of its own for it (bench/RESULTS.md § 13e).
   */
  private ownAtLeast(ms: number, now: number): number {
    if (this.clock === null) return ms;
    const cpuMs = Number(this.clock.read() - this.cpuAtWindow) / 1e6;
    return ms - Math.max(0, now - this.windowStart - cpuMs);
  }

  /** `actor`'s CPU since its last report (ms), and how long ago that was. */
  take(actor: CpuSharer, now = performance.now()): { cpuMs: number; windowMs: number } {
    const account = this.accounts.get(actor);
    if (account === undefined) return { cpuMs: 0, windowMs: 1 };
    this.reshare(now);
    const cpuMs = account.sinceReport * this.factor;
    const windowMs = Math.max(1, now - account.reportedAt);
    account.sinceReport = 0;
    account.reportedAt = now;
    return { cpuMs, windowMs };
  }

  /** Work arrived: at most once per window, is the thread busy, and who makes it so? */
  check(now = performance.now()): void {
    const elapsed = now - this.windowStart;
    if (elapsed < BUSY_WINDOW_MS) return;
    let share: number;
    if (this.clock !== null) {
      const cpu = this.clock.read();
      share = Number(cpu - this.cpuAtWindow) / 1e6 / elapsed;
      this.cpuAtWindow = cpu;
    } else share = this.timedInWindow / elapsed;
    this.windowStart = now;
    const timed = this.timedInWindow;
    this.timedInWindow = 0;
    const cpuMs = share * elapsed;
    const busy = share >= BUSY_SHARE;
    for (const [actor, account] of this.accounts) {
      const dominant =
        busy &&
        (this.shared
          ? account.inWindow >= DOMINANT_SHARE * timed && account.inWindow >= MIN_OWN_SHARE * elapsed
          : this.accounts.size === 1);
      const long = account.longest > 0 && cpuMs >= account.longest;
      account.inWindow = 0;
      account.longest = 0;
      if (!dominant && !long) continue;
      if (!this.shared || now - account.seenBusyAt <= REPEAT_WITHIN_MS)
        actor.sayBusy(
          !this.shared ? BusyReason.OwnThreadFull : dominant ? BusyReason.Dominant : BusyReason.LongStretch,
        );
      account.seenBusyAt = now;
    }
  }

  /** The factor from timed stretches to CPU, from the clock once per SHARE_EVERY_MS. */
  private reshare(now: number): void {
    if (this.clock === null || now - this.sharedAt < SHARE_EVERY_MS || this.timedSinceShare <= 0) return;
    const cpu = this.clock.read();
    this.factor = Math.min(10, Number(cpu - this.cpuAtShare) / 1e6 / this.timedSinceShare);
    this.cpuAtShare = cpu;
    this.sharedAt = now;
    this.timedSinceShare = 0;
  }

  close(): void {
    this.clock?.close();
  }
}
