import { Errors, type AnvilError } from '../../shared/errors.js';
import type { ActorSpec } from '../../shared/protocol/cell-messages.js';
import { Fifo } from './fifo.js';
import type { PendingRequest } from './pending-request.js';
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
  /**
   * Quiet actors start on their cell's shared threads (many actors per thread, each in its own
   * isolate); false: every actor gets threads of its own (`--shared-threads 0`).
   */
  shareThreads: boolean;
}

/** What an actor asks of the outside world: a thread started in its cell. */
export interface ThreadStarter {
  isCellReady(cell: number): boolean;
  /** A thread for the actor: `shared`, a place on one of the cell's shared threads; else one of its own. */
  startThread(cell: number, spec: ActorSpec, thread: number, shared: boolean): boolean;
}

const START_FAILURE_BACKOFF_MS = 1_000;
/**
 * An actor with threads of its own gives them back (to a place on a shared thread) once it has not
 * kept a thread busy for this long and its threads use less than CALM_CORES of CPU.
 */
const CALM_MS = 10_000;
const CALM_CORES = 0.25;
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
  private readonly waiting = new Fifo<PendingRequest>();
  private starting = 0;
  private nextThread = 0;
  /** Thread numbers started on a shared thread (the others are threads of its own). */
  private readonly sharedNumbers = new Set<number>();
  /** It has threads of its own (it kept a shared thread busy), since then; see CALM_MS. */
  private ownThreads = false;
  private lastBusyAt = 0;
  private failedUntil = 0;
  /** False once a newer release took over: the actor drains and is retired. */
  current = true;
  /** It lives in its host's quarantine cell (front/scheduling/host-faults.ts), not where hashing puts it. */
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

  /** Of its threads, places on a shared thread. */
  get sharedThreadCount(): number {
    return this.threads.filter((t) => this.isShared(t)).length;
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
    for (const link of [...this.threads]) this.retireLink(link);
    if (this.waiting.length > 0) this.startThread();
  }

  get busy(): boolean {
    return this.waiting.length > 0 || this.links.some((t) => t.load > 0) || this.starting > 0;
  }

  dispatch(job: PendingRequest): void {
    const now = Date.now();
    const thread = this.leastLoaded();
    if (
      thread !== null &&
      thread.load < this.limits.threadConcurrency &&
      this.waiting.length === 0 &&
      !this.hold.held
    ) {
      thread.send(job);
      // On a shared thread a long stretch may be another actor's: the thread says whose (CpuShares).
      if (
        !this.isShared(thread) &&
        thread.load > 1 &&
        thread.oldestAge(now) >= this.limits.scaleUpAfterMs &&
        now - thread.lastHeard >= this.limits.scaleUpAfterMs
      )
        this.moreThreads();
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
    // Promoted (or calmed down): once a thread of the kind it now needs serves, those of the other
    // kind finish what they have and retire. One of the other kind serves until then.
    const wanted = this.wantsShared;
    if (this.isShared(link) === wanted)
      for (const other of this.threads.filter((t) => this.isShared(t) !== wanted)) this.retireLink(other);
    this.threads.push(link);
    this.pump();
  }

  /** Started on a shared thread. */
  isShared(link: ThreadLink): boolean {
    return this.sharedNumbers.has(link.thread);
  }

  /** True while it has threads of its own (it kept a shared thread busy). */
  get hasOwnThreads(): boolean {
    return this.ownThreads;
  }

  /** Where it lives now: a place on a shared thread (a quiet actor, sharing on), or threads of its own. */
  private get wantsShared(): boolean {
    return this.limits.shareThreads && !this.ownThreads;
  }

  private retireLink(link: ThreadLink): void {
    const at = this.threads.indexOf(link);
    if (at >= 0) this.threads.splice(at, 1);
    link.retire();
    if (link.load > 0 && !link.closed) this.leaving.add(link);
  }

  /** A thread answered a request: it has room for a waiting one. */
  settled(): void {
    this.pump();
  }

  /**
   * A thread says this actor keeps a core busy (cell/actors/cpu-shares.ts): on a shared thread, it gets a
   * thread of its own; on its own threads, another one shares the work, up to the maximum.
   */
  threadBusy(): void {
    this.lastBusyAt = Date.now();
    if (this.current) this.moreThreads();
  }

  detach(link: ThreadLink): void {
    this.leaving.delete(link);
    const index = this.threads.indexOf(link);
    if (index >= 0) this.threads.splice(index, 1);
    this.sharedNumbers.delete(link.thread);
    if (this.waiting.length > 0) this.startThread();
  }

  /** A thread could not start (its release does not load, say): waiting requests fail with 502. */
  threadFailed(): void {
    if (this.starting > 0) this.starting--;
    // Its own thread did not start: it goes on on its shared one.
    if (this.ownThreads && this.threads.some((t) => this.isShared(t)) && this.starting === 0) {
      this.ownThreads = false;
      this.pump();
      return;
    }
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

  /**
   * Calm for CALM_MS with its threads of its own using less than CALM_CORES: it goes back to a
   * place on a shared thread (its own threads retire once that one serves).
   */
  calmDown(now: number, cores: number): boolean {
    if (
      !this.ownThreads ||
      !this.limits.shareThreads ||
      now - this.lastBusyAt < CALM_MS ||
      cores >= CALM_CORES ||
      !this.current
    )
      return false;
    this.ownThreads = false;
    if (this.threads.length > 0) this.startThread();
    return true;
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
      if (thread === null) {
        this.startThread();
        return;
      }
      if (thread.load >= this.limits.threadConcurrency) {
        this.moreThreads();
        return;
      }
      this.waiting.shift();
      thread.send(head);
    }
  }

  /**
   * The thread to send to. Given threads of its own, an actor sends nothing more to its shared
   * thread: new work waits for its own thread (the shared one gives back what it has not begun).
   */
  private leastLoaded(): ThreadLink | null {
    const own = !this.wantsShared;
    let best: ThreadLink | null = null;
    for (const t of this.threads) if ((!own || !this.isShared(t)) && (best === null || t.load < best.load)) best = t;
    return best;
  }

  /**
   * The work needs more than it has: an actor on a shared thread gets a thread of its own (the
   * shared one retires once that serves); one with threads of its own, one more.
   */
  private moreThreads(): void {
    if (this.wantsShared) {
      this.ownThreads = true;
      this.lastBusyAt = Date.now();
    }
    this.startThread();
  }

  /** A thread where it lives now: a place on a shared thread, or one of its own. */
  private startThread(): void {
    if (this.hold.held) return;
    const shared = this.wantsShared;
    const sameKind = this.threads.filter((t) => this.isShared(t) === shared).length;
    // One place on a shared thread is all a quiet actor has: it is served by the thread, not by more of them.
    if (sameKind + this.starting >= (shared ? 1 : this.limits.maxThreads)) return;
    if (!this.starter.isCellReady(this.cell)) return;
    if (this.starter.startThread(this.cell, this.spec, this.nextThread, shared)) {
      if (shared) this.sharedNumbers.add(this.nextThread);
      this.nextThread++;
      this.starting++;
    }
  }
}
