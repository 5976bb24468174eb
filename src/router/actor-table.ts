import type { Socket } from 'node:net';
import { assignCell } from '../cells/assign.js';
import type { CellEvents } from '../cells/cell-supervisor.js';
import { Errors } from '../errors.js';
import { formatApiId, sameApi, type ApiId } from '../protocol/api-id.js';
import type { ActorSpec } from '../protocol/cell-messages.js';
import { answerPayload, type BusCall, type CallReply } from '../protocol/bus-calls.js';
import type { EnqueueOutcome, EnqueueRequest } from '../protocol/enqueue.js';
import type { ThreadHello } from '../protocol/hello.js';
import type { ThreadStats } from '../protocol/stats.js';
import { ActorHandle, type ActorLimits, type ThreadStarter } from './actor-handle.js';
import { CpuPlacement } from './cpu-placement.js';
import type { FaultBoard } from './fault-board.js';
import { FaultPolicy } from './fault-policy.js';
import { QuarantineCells, type QuarantineControl } from './quarantine-cells.js';
import type { Job } from './job.js';
import type { ActorGauges } from './metrics.js';
import { ThreadLink } from './thread-link.js';
import type { SwitchableReader } from '../protocol/thread-server.js';
import { recentCpu } from './recent-cpu.js';

export type Log = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/** What the table needs of the cells: threads started and stopped, cells added, retired and killed. */
export interface CellControl extends ThreadStarter, QuarantineControl {
  terminateThread(cell: number, actor: string, thread: number): boolean;
  /** Starts one more cell; a `nice` above the cells' usual one runs it at a lower CPU priority. */
  addCell(nice?: number): number;
  kill(cell: number): void;
}

/** After asking a cell to terminate a thread, wait this long before killing the cell. */
const TERMINATE_GRACE_MS = 3_000;
/** An API keeping more than this many cores busy is CPU-heavy; it stays so until light for HEAVY_HOLD_MS. */
const HEAVY_CORES = 0.5;
/** …and whose requests cost more than this much CPU each (a busy API of cheap requests is not a hog). */
const HEAVY_MS_PER_REQUEST = 5;
const HEAVY_HOLD_MS = 30_000;
/** The priority of the low-priority cell: weight 15 against the router's 1024 (nice 0). */
const LOW_PRIORITY_NICE = 19;

/**
 * Every actor the router knows, by id (`<host>/<env>/<key>@<release>`): created on the first request
 * for a release, dropped once superseded and drained. It turns cell events into actor events,
 * applies the fault policy (quarantine, pause) and watches for threads that stopped answering.
 */
export class ActorTable {
  private readonly actors = new Map<string, ActorHandle>();
  private control: CellControl | null = null;
  private busCall: (caller: ActorSpec, call: BusCall, reply: CallReply, offerPeer: (target: ActorSpec, key: string) => void) => void = (_c, _call, reply) =>
    reply(answerPayload({ status: 503, headers: [], body: Buffer.alloc(0) }));
  /** A thread reported what it counted itself: requests it took from peers, calls it made that way, sandbox CPU. */
  private threadReport: (spec: ActorSpec, stats: ThreadStats) => void = () => {};
  private readonly faults = new FaultPolicy();
  private readonly quarantine: QuarantineCells;
  private readonly cpu = new CpuPlacement(HEAVY_CORES, HEAVY_MS_PER_REQUEST, HEAVY_HOLD_MS);
  /** The cell of CPU-heavy APIs, started when the first one shows up. */
  private lowPriorityCell: number | null = null;
  private readonly sweeper: NodeJS.Timeout;
  private board: FaultBoard | null = null;

  constructor(
    private readonly baseCells: number,
    /** Every cell at most: the base cells, the low-priority cell and the quarantine cells. */
    maxCells: number,
    private readonly limits: ActorLimits,
    private readonly log: Log,
  ) {
    this.quarantine = new QuarantineCells(this.faults, () => this.control!, baseCells, maxCells, log);
    const every = Math.min(1000, Math.max(50, Math.min(limits.idleMs, limits.stuckAfterMs) / 4));
    this.sweeper = setInterval(() => this.sweep(Date.now()), every);
    this.sweeper.unref();
  }

  useCells(control: CellControl): void {
    this.control = control;
  }

  /** Quarantines and pauses decided here are told to `board`; those of other instances apply here (fault-board.ts). */
  shareFaults(board: FaultBoard): void {
    this.board = board;
    this.faults.decided = (api, decision) => board.tell(api, decision);
    board.listen((api, decision) => {
      const changed = this.faults.adopt(api, decision, Date.now());
      if (changed !== null) this.log('warn', `API ${changed} by another instance`, { api: api.key, host: api.host, env: api.env, strikes: decision.strikes, pausedMs: decision.pausedForMs });
      if (changed === 'paused') for (const actor of this.actors.values()) if (sameApi(actor.spec, api)) actor.failWaiting();
    });
  }

  private enqueue: (caller: ActorSpec, request: EnqueueRequest) => Promise<EnqueueOutcome> = async () => ({ ok: false, status: 503, error: 'jobs are not available' });

  /** Where jobs queued by actor threads go (the job queue). */
  useJobs(enqueue: (caller: ActorSpec, request: EnqueueRequest) => Promise<EnqueueOutcome>): void {
    this.enqueue = enqueue;
  }

  /** Where bus calls from actor threads go (the Bus), and what threads count themselves (metrics). */
  useBus(
    call: (caller: ActorSpec, call: BusCall, reply: CallReply, offerPeer: (target: ActorSpec, key: string) => void) => void,
    threadReport: (spec: ActorSpec, stats: ThreadStats) => void,
  ): void {
    this.busCall = call;
    this.threadReport = threadReport;
  }

  dispatch(spec: ActorSpec, job: Job): void {
    const now = Date.now();
    const paused = this.faults.admit(spec, now);
    if (paused > 0) {
      job.fail(Errors.paused(), Math.ceil(paused / 1000));
      return;
    }
    let actor = this.actors.get(spec.id);
    if (actor === undefined) {
      const cell = this.cellFor(spec, now);
      actor = new ActorHandle(spec, cell, this.limits, this.control!);
      this.actors.set(spec.id, actor);
    } else {
      // A quarantined API whose cell was reaped (its index may serve another API now) starts over in a new one.
      const placement = this.faults.placement(spec);
      if (placement !== undefined && placement.cell !== actor.cell) actor.moveTo(this.cellFor(spec, now));
    }
    actor.current = true;
    actor.dispatch(job);
  }

  /** A newer release (or a disable/delete) took over: the actor gets no new work and drains. */
  supersede(actorId: string): void {
    const actor = this.actors.get(actorId);
    if (actor !== undefined) this.retireFromService(actor);
  }

  /** Every actor of an API (any release), e.g. before deleting its data. */
  supersedeApi(host: string, key: string): void {
    for (const actor of this.actors.values()) {
      if (actor.spec.host !== host || actor.spec.key !== key) continue;
      this.retireFromService(actor);
      // Disabled or deleted: its quarantine cell goes as soon as its threads are done.
      const placement = this.faults.placement(actor.spec);
      if (placement !== undefined) placement.lastUsed = 0;
    }
  }

  /** No new work for the actor; its threads stop taking calls from peers at once (they drain). */
  private retireFromService(actor: ActorHandle): void {
    actor.current = false;
    for (const link of actor.links) link.stopPeers();
  }

  /** After a bus call from `caller` to `target`: offers the caller one of the target's threads. */
  private offerPeer(caller: ThreadLink, target: ActorSpec, key: string): void {
    const actor = this.actors.get(target.id);
    if (actor === undefined || !actor.current) return;
    let best: ThreadLink | null = null;
    for (const link of actor.links) if (!link.retired && link.peerAddress !== undefined && (best === null || link.load < best.load)) best = link;
    if (best !== null) caller.offerPeer(key, best, target.id);
  }

  threadArrived(hello: ThreadHello, socket: Socket, reader: SwitchableReader): void {
    const actor = this.actors.get(hello.actor);
    if (actor === undefined || actor.cell !== hello.cell) {
      socket.destroy();
      return;
    }
    const link = new ThreadLink(
      socket,
      reader,
      hello.cell,
      hello.thread,
      hello.peer,
      () => actor.settled(),
      (closed) => {
        // Held before detaching, so that no thread is started for the waiting requests meanwhile.
        if (closed.lostWork && this.control!.isCellReady(closed.cell)) actor.hold.threadLost(closed.cell, closed.thread);
        actor.detach(closed);
        if (closed.lostWork) this.faults.noteLostWork(actor.spec, closed.cell, Date.now());
      },
      (call, reply) => this.busCall(actor.spec, call, reply, (target, key) => this.offerPeer(link, target, key)),
      (request, reply) => {
        this.enqueue(actor.spec, request).then(reply, (error: unknown) => reply({ ok: false, status: 503, error: `the job was not stored: ${(error as Error).message}` }));
      },
      (reported) => {
        this.noteCpu(actor, Date.now());
        const { served, peerCalls, sandboxCpu, quotaRefusals, logFilesRemoved, sandboxBreaches, outgoing } = reported.stats;
        if ([served, peerCalls, sandboxCpu, quotaRefusals, logFilesRemoved, sandboxBreaches, outgoing].some((counted) => counted !== undefined)) this.threadReport(actor.spec, reported.stats);
      },
      () => actor.threadBusy(),
    );
    actor.attach(link);
  }

  readonly cellEvents: Omit<CellEvents, 'log'> = {
    ready: (cell) => {
      for (const actor of this.actors.values()) actor.cellReady(cell);
    },
    down: (cell, reason, running) => {
      const now = Date.now();
      /** The APIs of the actors that were running tenant code, by their formatApiId. */
      const culprits = new Map<string, ApiId>();
      for (const id of running) {
        const actor = this.actors.get(id);
        if (actor !== undefined) culprits.set(formatApiId(actor.spec), actor.spec);
      }
      this.log('warn', 'cell died; restarting it', { cell, reason, runningTenantCode: [...culprits.keys()] });
      // Threads whose sockets have not closed yet also had work in the dead cell (a thread left
      // behind by a move to another cell included).
      for (const actor of this.actors.values()) {
        if (actor.links.some((l) => l.cell === cell && l.load > 0)) this.faults.noteLostWork(actor.spec, cell, now);
      }
      const paused: Array<{ api: ApiId; forMs: number }> = [];
      for (const { api, verdict } of this.faults.judge(cell, now, [...culprits.values()])) {
        const { host, env, key } = api;
        if (verdict.action === 'pause') {
          this.log('error', 'API killed its quarantine cell again; paused', { api: key, host, env, cell, pausedMs: verdict.forMs });
          paused.push({ api, forMs: verdict.forMs });
          continue;
        }
        const quarantine = this.quarantine.place(api, now);
        this.log('warn', 'API quarantined in a cell of its own', { api: key, host, env, from: cell, cell: quarantine });
        for (const actor of this.actors.values()) if (sameApi(actor.spec, api)) actor.moveTo(quarantine);
      }
      for (const actor of this.actors.values()) if (actor.cell === cell) actor.cellDown();
      // A paused API's cell is not kept for it: its waiting requests fail, and after the pause it
      // starts over in a new quarantine cell.
      for (const { api, forMs } of paused) {
        for (const actor of this.actors.values()) if (sameApi(actor.spec, api)) actor.failWaiting(Errors.paused, Math.ceil(forMs / 1000));
        this.quarantine.release(api);
      }
      // The verdict is given: work held since a thread of this cell was lost goes on (verdict-hold.ts).
      for (const actor of this.actors.values()) actor.hold.cellDown(cell);
    },
    threadFailed: (_cell, actorId, thread, error) => {
      this.log('error', 'actor thread failed to start', { actor: actorId, thread, error });
      this.actors.get(actorId)?.threadFailed();
    },
    threadExit: (cell, actorId, thread) => {
      this.actors.get(actorId)?.hold.threadExited(cell, thread);
    },
  };

  /** Where an API's actor lives: its quarantine cell, the low-priority cell while it is CPU-heavy, or its hashed cell. */
  private cellFor(api: ApiId, now: number): number {
    const quarantined = this.quarantine.cellOf(api, now);
    if (quarantined !== undefined) return quarantined;
    if (this.lowPriorityCell !== null && this.cpu.isHeavy(api, now)) return this.lowPriorityCell;
    return assignCell(formatApiId(api), this.baseCells);
  }

  /** A thread reported its CPU: an API that keeps too many cores busy moves to the low-priority cell. */
  private noteCpu(actor: ActorHandle, now: number): void {
    const { cores, cpuMs, requests } = recentCpu(actor.links, now);
    // A request still running at the end of a window (an endless loop) makes its cost unbounded.
    const msPerRequest = requests === 0 ? Infinity : cpuMs / requests;
    if (!this.cpu.note(actor.spec, cores, msPerRequest, now) || this.faults.placement(actor.spec) !== undefined) return;
    this.lowPriorityCell ??= this.control!.addCell(LOW_PRIORITY_NICE);
    this.log('warn', 'API keeps the CPU busy; it now runs in the low-priority cell', {
      api: actor.spec.key,
      host: actor.spec.host,
      cores: Math.round(cores * 100) / 100,
      msPerRequest: Number.isFinite(msPerRequest) ? Math.round(msPerRequest * 10) / 10 : null,
      from: actor.cell,
      cell: this.lowPriorityCell,
    });
    actor.relocate(this.lowPriorityCell);
  }

  /** Stops every actor: waiting requests fail, threads retire once their work is done. */
  retireAll(): void {
    for (const actor of this.actors.values()) {
      actor.current = false;
      actor.failWaiting();
    }
    this.sweep(Date.now());
  }

  /** Until when (ms since epoch) the fault policy pauses the API; 0 when it does not. */
  pausedUntil(api: ApiId): number {
    return this.faults.placement(api)?.pausedUntil ?? 0;
  }

  /** Per API (its releases summed: an old one may still be draining), for /anvil/metrics. */
  gauges(): ActorGauges[] {
    const byApi = new Map<string, ActorGauges>();
    for (const actor of this.actors.values()) {
      const { host, key } = actor.spec;
      const id = `${host}\0${key}`;
      let g = byApi.get(id);
      if (g === undefined) byApi.set(id, (g = { host, api: key, threads: 0, mailbox: 0, isolates: 0, isolateHeapBytes: 0 }));
      g.threads += actor.threadCount;
      g.mailbox += actor.mailboxDepth;
      for (const link of actor.links) {
        g.isolates += link.stats.isolates;
        g.isolateHeapBytes += link.stats.isolateHeapBytes;
      }
    }
    return [...byApi.values()];
  }

  /** True when no request is waiting or in flight anywhere. */
  get idle(): boolean {
    for (const actor of this.actors.values()) if (actor.busy) return false;
    return true;
  }

  close(): void {
    clearInterval(this.sweeper);
    this.board?.close();
  }

  private sweep(now: number): void {
    this.quarantine.reap(now, this.limits.idleMs, (api) => {
      for (const actor of this.actors.values()) if (sameApi(actor.spec, api) && (actor.busy || actor.threadCount > 0)) return true;
      return false;
    });
    for (const [id, actor] of this.actors) {
      this.watch(actor, now);
      actor.retireIdle(now);
      // Light again, and idle: back to its own cell for its next thread.
      if (actor.cell === this.lowPriorityCell && actor.threadCount === 0 && !actor.busy) actor.relocate(this.cellFor(actor.spec, now));
      if (!actor.current && !actor.busy && actor.threadCount === 0) this.actors.delete(id);
    }
  }

  /**
   * A thread with work that has been silent for `stuckAfterMs` is probed; if its event loop does
   * not answer within `stuckAfterMs` more, its cell terminates it; if even that does not stop it
   * (native code that cannot be interrupted, such as an endless SQL query), the cell is killed.
   */
  private watch(actor: ActorHandle, now: number): void {
    const after = this.limits.stuckAfterMs;
    for (const link of actor.links) {
      if (link.closed || link.load === 0) continue;
      if (link.terminateAskedAt > 0) {
        if (now - link.terminateAskedAt > TERMINATE_GRACE_MS) {
          this.log('error', 'stuck thread did not stop; killing its cell', { api: actor.spec.key, host: actor.spec.host, cell: link.cell });
          link.terminateAskedAt = now;
          // The API is why the cell dies, even when its thread was retired by a move and its lost
          // work would not otherwise be counted.
          this.faults.noteLostWork(actor.spec, link.cell, now, true);
          this.control!.kill(link.cell);
        }
      } else if (link.probeSentAt > 0 && now - link.probeSentAt > after) {
        this.log('error', 'thread stuck past the request timeout; terminating it', { api: actor.spec.key, host: actor.spec.host, cell: link.cell, thread: link.thread });
        link.terminateAskedAt = now;
        this.control!.terminateThread(link.cell, actor.spec.id, link.thread);
      } else if (link.probeSentAt === 0 && now - link.lastHeard > after) {
        link.probe(now);
      }
    }
  }
}
