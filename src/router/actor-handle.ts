import { Errors, type AnvilError } from '../errors.js';
import type { ActorSpec } from '../protocol/cell-messages.js';
import { Fifo } from './fifo.js';
import type { Job } from './job.js';
import type { ThreadLink } from './thread-link.js';
import { VerdictHold } from './verdict-hold.js';

export interface ActorLimits {
  /** Threads per actor at most (SPEC §10: 2). */
  maxThreads: number;
  /** Requests in flight on one thread at most; more wait in the mailbox. */
  threadConcurrency: number;
  /** Requests waiting in the mailbox at most; beyond that: 503. */
  mailbox: number;
  /** A thread idle this long is retired (SPEC §10: 30 s). */
  idleMs: number;
  /**
   * Start another thread when the least loaded one has had a request in flight this long and has
   * said nothing for as long (it is held by one long stretch of work: a migration, a heavy
   * directive). Otherwise a thread is added when one says it keeps a core busy (`threadBusy`), or
   * when its requests in flight reach `threadConcurrency`: not for requests in flight as such. A
   * thread the router keeps fed with quick requests has many in flight while using half a core;
   * a second one then costs more CPU per request (smaller batches, more wake-ups) for no more
   * throughput (bench/notes/custom-directive-profile.md).
   */
  scaleUpAfterMs: number;
  /** A busy thread silent this long is probed; unanswered this long again, it is stopped. */
  stuckAfterMs: number;
}

/** What an actor asks of the outside world: a thread started in its cell. */
export interface ThreadStarter {
  isCellReady(cell: number): boolean;
  startThread(cell: number, spec: ActorSpec, thread: number): boolean;
}

const START_FAILURE_BACKOFF_MS = 1_000;
/** How long new work waits, at most, for the verdict on a thread lost with requests in flight (verdict-hold.ts). */
const VERDICT_WAIT_MS = 2_000;

/**
 * The router's view of one actor (one API release in its cell): its threads, its bounded mailbox,
 * and the rule for starting threads (on first request, and again while all are busy, up to the
 * maximum). Requests for a cell that is down wait here until it is back.
 */
export class ActorHandle {
  private readonly threads: ThreadLink[] = [];
  /**
   * Threads retired by a move to another cell while they still had requests in flight: they take no
   * new work, but the watchdog keeps watching them (one stuck in native code would otherwise hold
   * its cell's CPU unseen) and the actor is busy until they are done.
   */
  private readonly leaving = new Set<ThreadLink>();
  /** A cell it moves to once that cell is ready (see relocate). */
  private movingTo: number | null = null;
  private readonly waiting = new Fifo<Job>();
  private starting = 0;
  private nextThread = 0;
  private failedUntil = 0;
  /** False once a newer release took over: the actor drains and is retired. */
  current = true;
  /** It lives in its host's quarantine cell (router/host-faults.ts), not where hashing puts it. */
  inHostCell = false;
  /** A thread of it has dialled in once (an actor that never ran had no work in a cell that died). */
  private ran = false;
  /** New work waits here while the router cannot tell yet whether a lost thread's cell is dying. */
  readonly hold = new VerdictHold(VERDICT_WAIT_MS, () => this.pump());

  constructor(
    readonly spec: ActorSpec,
    public cell: number,
    private readonly limits: ActorLimits,
    private readonly starter: ThreadStarter,
  ) {}

  get threadCount(): number {
    return this.threads.length;
  }

  get mailboxDepth(): number {
    return this.waiting.length;
  }

  /** Its threads, those still finishing work after a move included (for the watchdog and gauges). */
  get links(): readonly ThreadLink[] {
    for (const link of this.leaving) if (link.closed || link.load === 0) this.leaving.delete(link);
    return this.leaving.size === 0 ? this.threads : [...this.threads, ...this.leaving];
  }

  /**
   * Moves a live actor to another cell: its threads are retired (they finish what they have) and
   * new ones start in `cell` as work comes.
   */
  relocate(cell: number): void {
    if (cell === this.cell) return;
    // The old threads keep serving until the new cell can start one (a new cell takes a second).
    if (!this.starter.isCellReady(cell)) {
      this.movingTo = cell;
      return;
    }
    this.moveTo(cell);
  }

  /**
   * Moves the actor to `cell` now (a quarantine cell goes here at once, once a cell died of the
   * API): its threads are retired, those with work in flight stay watched until done, and new ones
   * start in `cell` as work comes.
   */
  moveTo(cell: number): void {
    // Quarantine wins over a pending move to the low-priority cell.
    this.movingTo = null;
    this.cell = cell;
    // A thread still starting in the old cell is refused when it dials in (its cell is not ours).
    this.starting = 0;
    for (const link of this.threads.splice(0)) {
      link.retire();
      if (link.load > 0 && !link.closed) this.leaving.add(link);
    }
    if (this.waiting.length > 0) this.startThread();
  }

  get busy(): boolean {
    return this.waiting.length > 0 || this.links.some((t) => t.load > 0) || this.starting > 0;
  }

  dispatch(job: Job): void {
    const now = Date.now();
    const thread = this.leastLoaded();
    if (thread !== null && thread.load < this.limits.threadConcurrency && this.waiting.length === 0 && !this.hold.held) {
      thread.send(job);
      if (thread.load > 1 && thread.oldestAge(now) >= this.limits.scaleUpAfterMs && now - thread.lastHeard >= this.limits.scaleUpAfterMs) this.startThread();
      return;
    }
    if (now < this.failedUntil && this.threads.length === 0) {
      job.fail(Errors.actorFailed());
      return;
    }
    if (this.waiting.length >= this.limits.mailbox) {
      job.fail(Errors.mailboxFull(), 1);
      return;
    }
    this.waiting.push(job);
    this.startThread();
  }

  /** True until a thread of it first dials in. */
  get neverRan(): boolean {
    return !this.ran;
  }

  attach(link: ThreadLink): void {
    this.ran = true;
    if (this.starting > 0) this.starting--;
    this.threads.push(link);
    this.pump();
  }

  /** A thread answered a request: it has room for a waiting one. */
  settled(): void {
    this.pump();
  }

  /** A thread keeps a core busy (actors/busy-meter.ts): another one shares the work, up to the maximum. */
  threadBusy(): void {
    if (this.current) this.startThread();
  }

  detach(link: ThreadLink): void {
    this.leaving.delete(link);
    const index = this.threads.indexOf(link);
    if (index >= 0) this.threads.splice(index, 1);
    if (this.waiting.length > 0) this.startThread();
  }

  /** A thread could not start (its release does not load, say): waiting requests fail with 502. */
  threadFailed(): void {
    if (this.starting > 0) this.starting--;
    if (this.threads.length > 0 || this.starting > 0) return;
    this.failedUntil = Date.now() + START_FAILURE_BACKOFF_MS;
    for (const job of this.waiting.drain()) job.fail(Errors.actorFailed());
  }

  /** The cell died: its threads are gone (their links fail what they had); waiting requests are held. */
  cellDown(): void {
    this.starting = 0;
  }

  /** A cell became ready: its own (start waiting threads), or the one it is moving to. */
  cellReady(cell: number): void {
    if (this.movingTo === cell) this.relocate(cell);
    else if (cell === this.cell && this.waiting.length > 0) this.startThread();
  }

  /** Retires threads idle for too long (all of them when the actor is no longer current). */
  retireIdle(now: number): void {
    for (const link of [...this.threads]) {
      const idle = link.load === 0 && (!this.current || now - link.lastActive >= this.limits.idleMs);
      if (!idle || (!this.current && this.waiting.length > 0)) continue;
      this.threads.splice(this.threads.indexOf(link), 1);
      link.retire();
    }
  }

  /** Fails every waiting request (shutdown: not ready; a paused API: paused, with the pause's retry-after). */
  failWaiting(error: () => AnvilError = Errors.notReady, retryAfterSeconds = 1): void {
    for (const job of this.waiting.drain()) job.fail(error(), retryAfterSeconds);
  }

  private pump(): void {
    while (this.waiting.length > 0 && !this.hold.held) {
      const head = this.waiting.peek()!;
      if (head.done) {
        this.waiting.shift();
        continue;
      }
      const thread = this.leastLoaded();
      if (thread === null || thread.load >= this.limits.threadConcurrency) {
        this.startThread();
        return;
      }
      this.waiting.shift();
      thread.send(head);
    }
  }

  private leastLoaded(): ThreadLink | null {
    let best: ThreadLink | null = null;
    for (const t of this.threads) if (best === null || t.load < best.load) best = t;
    return best;
  }

  private startThread(): void {
    if (this.hold.held) return;
    if (this.threads.length + this.starting >= this.limits.maxThreads) return;
    if (!this.starter.isCellReady(this.cell)) return;
    if (this.starter.startThread(this.cell, this.spec, this.nextThread)) {
      this.nextThread++;
      this.starting++;
    }
  }
}
