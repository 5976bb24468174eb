import { assignCell } from '../../cell/process/assign.js';
import type { CellEvents } from '../../cell/process/cell-supervisor.js';
import { Errors } from '../../shared/errors.js';
import { formatApiId, formatEnvId, sameApi, type ApiId } from '../../shared/protocol/api-id.js';
import { busyReasonText } from '../../shared/protocol/busy-reasons.js';
import type { ActorSpec } from '../../shared/protocol/cell-messages.js';
import { answerPayload, type BusCall, type CallReply } from '../../shared/protocol/bus-calls.js';
import type { EnqueueOutcome, EnqueueRequest } from '../../shared/protocol/enqueue.js';
import type { ThreadHello } from '../../shared/protocol/hello.js';
import type { ThreadStats } from '../../shared/protocol/stats.js';
import { ActorHandle, type ActorLimits, type ThreadStarter } from './actor-handle.js';
import { CpuPlacement } from './cpu-placement.js';
import type { FaultBoard } from './fault-board.js';
import { FaultPolicy } from './fault-policy.js';
import {
  DEFAULT_HOST_FAULT_LIMITS,
  HostFaults,
  type HostFaultLimits,
  type HostId,
  type HostStage,
  type HostVerdict,
} from './host-faults.js';
import { QuarantineCells, type QuarantineControl } from './quarantine-cells.js';
import type { PendingRequest } from './pending-request.js';
import type { ActorGauges } from '../meters/metrics.js';
import { ThreadLink } from './thread-link.js';
import type { Conduit, Replaceable } from '../../shared/protocol/thread-channels.js';
import { recentCpu } from './recent-cpu.js';

export type Log = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/** What the table needs of the cells: threads started and stopped, cells added, retired and killed. */
export interface CellControl extends ThreadStarter, QuarantineControl {
  terminateThread(cell: number, actor: string, thread: number): boolean;
  /** Starts one more cell; a `nice` above the cells' usual one runs it at a lower CPU priority. */
  addCell(nice?: number): number;
  kill(cell: number): void;
}

/**
 * A shared thread with work that has been silent this long is probed (then terminated, then its
 * cell killed, as any stuck thread: `watch`), however long --request-timeout is: the other actors on
 * it wait as long as it is stuck.
 */
const SHARED_STUCK_AFTER_MS = 5_000;
/** After asking a cell to terminate a thread, wait this long before killing the cell. */
const TERMINATE_GRACE_MS = 3_000;
/** An API keeping more than this many cores busy is CPU-heavy; it stays so until light for HEAVY_HOLD_MS. */
const HEAVY_CORES = 0.5;
/** …and whose requests cost more than this much CPU each (a busy API of cheap requests is not a hog). */
const HEAVY_MS_PER_REQUEST = 5;
const HEAVY_HOLD_MS = 30_000;
/** The priority of the low-priority cell: weight 15 against the router's 1024 (nice 0). */
const LOW_PRIORITY_NICE = 19;

/** A host's fault state, for the overview and the metrics. */
export interface HostFaultState {
  host: string;
  env: string;
  /** Where its APIs start: `new-apis` (suspect), `all-apis` (moved); null: where hashing puts them. */
  stage: HostStage | null;
  /** Its quarantine cell, null while it has none. */
  cell: number | null;
  /** Its APIs that aborted cells within the window. */
  culprits: string[];
  /** Every API of it paused until then (ms since epoch); 0: not paused. */
  pausedUntil: number;
}

/**
 * Every actor the router knows, by id (`<host>/<env>/<key>@<release>`): created on the first request
 * for a release, dropped once superseded and drained. It turns cell events into actor events,
 * applies the fault policy (quarantine, pause) and watches for threads that stopped answering.
 */
export class ActorTable {
  private readonly actors = new Map<string, ActorHandle>();
  private control: CellControl | null = null;
  private busCall: (
    caller: ActorSpec,
    call: BusCall,
    reply: CallReply,
    offerPeer: (target: ActorSpec, key: string) => void,
  ) => void = (_c, _call, reply) =>
    reply(answerPayload({ status: 503, headers: [], body: Buffer.alloc(0), budgetLeft: 0 }));
  /** A thread reported what it counted itself: requests it took from peers, calls it made that way, sandbox CPU. */
  private threadReport: (spec: ActorSpec, stats: ThreadStats) => void = () => {};
  private readonly faults = new FaultPolicy();
  private readonly hosts: HostFaults;
  private readonly quarantine: QuarantineCells;
  /** Told of each API whose directive aborted a cell (a certain blame), for the metrics. */
  aborted: (api: ApiId) => void = () => {};
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
    hostLimits: HostFaultLimits = DEFAULT_HOST_FAULT_LIMITS,
  ) {
    this.hosts = new HostFaults(hostLimits);
    this.quarantine = new QuarantineCells(this.faults, this.hosts, () => this.control!, baseCells, maxCells, log);
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
      if (changed !== null)
        this.log('warn', `API ${changed} by another instance`, {
          api: api.key,
          host: api.host,
          env: api.env,
          strikes: decision.strikes,
          pausedMs: decision.pausedForMs,
        });
      if (changed === 'paused')
        for (const actor of this.actors.values()) if (sameApi(actor.spec, api)) actor.failWaiting();
    });
    this.hosts.decided = (host, decision) => board.tellHost(host, decision);
    board.listenHosts((host, decision) => {
      const now = Date.now();
      const changed = this.hosts.adopt(host, decision, now);
      if (changed === null) return;
      this.log('warn', `host ${changed} by another instance`, {
        host: host.host,
        env: host.env,
        strikes: decision.strikes,
        pausedMs: decision.pausedForMs,
      });
      if (changed === 'moved') this.moveHost(host);
      if (changed === 'paused') this.failHostWaiting(host, Math.ceil(decision.pausedForMs / 1000));
    });
  }

  private enqueue: (caller: ActorSpec, request: EnqueueRequest) => Promise<EnqueueOutcome> = async () => ({
    ok: false,
    status: 503,
    error: 'jobs are not available',
  });

  /** Where jobs queued by actor threads go (the job queue). */
  useJobs(enqueue: (caller: ActorSpec, request: EnqueueRequest) => Promise<EnqueueOutcome>): void {
    this.enqueue = enqueue;
  }

  /** Where bus calls from actor threads go (the Bus), and what threads count themselves (metrics). */
  useBus(
    call: (
      caller: ActorSpec,
      call: BusCall,
      reply: CallReply,
      offerPeer: (target: ActorSpec, key: string) => void,
    ) => void,
    threadReport: (spec: ActorSpec, stats: ThreadStats) => void,
  ): void {
    this.busCall = call;
    this.threadReport = threadReport;
  }

  dispatch(spec: ActorSpec, job: PendingRequest): void {
    const now = Date.now();
    const paused = this.faults.admit(spec, now);
    const hostPaused = this.hosts.admit(spec, now);
    if (paused > 0 || hostPaused > 0) {
      job.fail(
        hostPaused > paused ? this.hostPausedError(spec) : Errors.paused(),
        Math.ceil(Math.max(paused, hostPaused) / 1000),
      );
      return;
    }
    let actor = this.actors.get(spec.id);
    if (actor === undefined) {
      actor = new ActorHandle(spec, 0, this.limits, this.control!);
      actor.cell = this.cellFor(actor, now);
      this.actors.set(spec.id, actor);
    } else {
      // A quarantined API (or one in its host's quarantine cell) whose cell was reaped (its index may
      // serve another API now) starts over in a new one.
      const placement = this.faults.placement(spec);
      if (placement !== undefined && placement.cell !== actor.cell) actor.moveTo(this.cellFor(actor, now));
      else if (placement === undefined && actor.inHostCell && this.hosts.placement(spec)?.cell !== actor.cell)
        actor.moveTo(this.cellFor(actor, now));
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
    for (const link of actor.links)
      if (!link.retired && link.peerAddress !== undefined && (best === null || link.load < best.load)) best = link;
    if (best !== null) caller.offerPeer(key, best, target.id);
  }

  threadArrived(hello: ThreadHello, conduit: Conduit, reader: Replaceable): void {
    const actor = this.actors.get(hello.actor);
    if (actor === undefined || actor.cell !== hello.cell) {
      conduit.refuse();
      return;
    }
    const link = new ThreadLink(
      conduit,
      reader,
      hello.cell,
      hello.thread,
      hello.peer,
      () => actor.settled(),
      (closed) => {
        // Held before detaching, so that no thread is started for the waiting requests meanwhile.
        if (closed.lostWork && this.control!.isCellReady(closed.cell))
          actor.hold.threadLost(closed.cell, closed.thread);
        actor.detach(closed);
        if (closed.lostWork) this.faults.noteLostWork(actor.spec, closed.cell, Date.now());
      },
      (call, reply) => this.busCall(actor.spec, call, reply, (target, key) => this.offerPeer(link, target, key)),
      (request, reply) => {
        this.enqueue(actor.spec, request).then(reply, (error: unknown) =>
          reply({ ok: false, status: 503, error: `the job was not stored: ${(error as Error).message}` }),
        );
      },
      (reported) => {
        this.noteCpu(actor, Date.now());
        const { served, peerCalls, sandboxCpu, quotaRefusals, logFilesRemoved, sandboxBreaches, outgoing } =
          reported.stats;
        if (
          [served, peerCalls, sandboxCpu, quotaRefusals, logFilesRemoved, sandboxBreaches, outgoing].some(
            (counted) => counted !== undefined,
          )
        )
          this.threadReport(actor.spec, reported.stats);
      },
      (reason) => {
        const had = actor.hasOwnThreads;
        actor.threadBusy();
        if (!had && actor.hasOwnThreads)
          this.log('info', 'API keeps a shared thread busy; it now has threads of its own', {
            api: actor.spec.key,
            host: actor.spec.host,
            cell: actor.cell,
            reason: busyReasonText(reason),
          });
      },
      (job) => actor.dispatch(job),
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
      const blamed = this.faults.blame(cell, now, [...culprits.values()]);
      const hostVerdicts: Array<{ api: ApiId; verdict: NonNullable<HostVerdict> }> = [];
      for (const api of blamed.apis) {
        const verdict = this.faults.verdict(api, cell, now);
        // Only a certain blame counts against the host: never the guess made when a cell died of something else.
        if (blamed.certain) {
          this.aborted(api);
          const hostVerdict = this.hosts.blame(api, now);
          if (hostVerdict !== null) hostVerdicts.push({ api, verdict: hostVerdict });
        }
        const { host, env, key } = api;
        if (verdict.action === 'pause') {
          this.log('error', 'API killed its quarantine cell again; paused', {
            api: key,
            host,
            env,
            cell,
            pausedMs: verdict.forMs,
          });
          paused.push({ api, forMs: verdict.forMs });
          continue;
        }
        const quarantine = this.quarantine.place(api, now);
        this.log('warn', 'API quarantined in a cell of its own', { api: key, host, env, from: cell, cell: quarantine });
        for (const actor of this.actors.values())
          if (sameApi(actor.spec, api)) this.moveActor(actor, quarantine, false);
      }
      const pausedHosts: Array<{ host: HostId; forMs: number }> = [];
      for (const { api, verdict } of hostVerdicts) {
        const { host, env, key } = api;
        const { windowMs, aborts } = this.hosts.limits;
        if (verdict.action === 'suspect') {
          this.log('warn', 'host suspect: its APIs that start from now on start in its quarantine cell', {
            host,
            env,
            api: key,
            cell,
            windowMs,
          });
          // An API of the host whose first request came while the cell was dying was placed where
          // hashing put it (the dying cell, say): not having run yet, it starts in the host's cell.
          for (const actor of this.actors.values()) {
            if (
              actor.neverRan &&
              !actor.inHostCell &&
              sameHost(actor.spec, api) &&
              this.faults.placement(actor.spec) === undefined
            )
              this.moveActor(actor, this.quarantine.cellOfHost(api), true);
          }
        } else if (verdict.action === 'move') {
          const culpritKeys = [...(this.hosts.placement(api)?.culprits.keys() ?? [])];
          const moved = this.moveHost(api);
          this.log(
            'error',
            'host moved: its APIs aborted cells too often; all of them now run in its quarantine cell',
            { host, env, api: key, culprits: culpritKeys, aborts, windowMs, cell: moved },
          );
        } else {
          this.log('error', 'host paused: one more of its APIs aborted a cell', {
            host,
            env,
            api: key,
            pausedMs: verdict.forMs,
            strikes: this.hosts.placement(api)?.strikes,
          });
          pausedHosts.push({ host: api, forMs: verdict.forMs });
        }
      }
      for (const actor of this.actors.values()) if (actor.cell === cell) actor.cellDown();
      // A paused API's cell is not kept for it: its waiting requests fail, and after the pause it
      // starts over in a new quarantine cell.
      for (const { api, forMs } of paused) {
        for (const actor of this.actors.values())
          if (sameApi(actor.spec, api)) actor.failWaiting(Errors.paused, Math.ceil(forMs / 1000));
        this.quarantine.release(api);
      }
      for (const { host, forMs } of pausedHosts) this.failHostWaiting(host, Math.ceil(forMs / 1000));
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

  /**
   * Where an actor lives: its API's quarantine cell, its host's (host-faults.ts: the host is suspect
   * and the actor starts now, or the host was moved), the low-priority cell while it is CPU-heavy, or
   * its hashed cell. Sets `inHostCell`.
   */
  private cellFor(actor: ActorHandle, now: number): number {
    const api = actor.spec;
    actor.inHostCell = false;
    const quarantined = this.quarantine.cellOf(api, now);
    if (quarantined !== undefined) return quarantined;
    if (this.hosts.stage(api, now) !== null) {
      actor.inHostCell = true;
      return this.quarantine.cellOfHost(api);
    }
    if (this.lowPriorityCell !== null && this.cpu.isHeavy(api, now)) return this.lowPriorityCell;
    return assignCell(formatApiId(api), this.baseCells);
  }

  private moveActor(actor: ActorHandle, cell: number, inHostCell: boolean): void {
    actor.inHostCell = inHostCell;
    actor.moveTo(cell);
  }

  /** Every API of a moved host not quarantined alone goes to the host's quarantine cell; returns that cell (null: no actor to move). */
  private moveHost(host: HostId): number | null {
    let cell: number | null = this.hosts.placement(host)?.cell ?? null;
    for (const actor of this.actors.values()) {
      if (!sameHost(actor.spec, host) || this.faults.placement(actor.spec) !== undefined) continue;
      if (actor.inHostCell && actor.cell === cell) continue;
      cell = this.quarantine.cellOfHost(host);
      this.moveActor(actor, cell, true);
    }
    return cell;
  }

  /** A paused host's waiting requests fail with the pause's retry-after. */
  private failHostWaiting(host: HostId, retryAfterSeconds: number): void {
    for (const actor of this.actors.values())
      if (sameHost(actor.spec, host)) actor.failWaiting(() => this.hostPausedError(host), retryAfterSeconds);
  }

  private hostPausedError(host: HostId) {
    const culprits = this.hosts.placement(host)?.culprits.size ?? 0;
    return Errors.hostPaused(host.host, culprits, `${Math.round(this.hosts.limits.windowMs / 1000)} s`);
  }

  /** Every host the fault policy holds a record of, for the overview and the metrics. */
  hostFaults(now = Date.now()): HostFaultState[] {
    const states: HostFaultState[] = [];
    for (const placement of this.hosts.all()) {
      const culprits = [...placement.culprits]
        .filter(([, at]) => now - at < this.hosts.limits.windowMs)
        .map(([key]) => key);
      states.push({
        host: placement.host,
        env: placement.env,
        stage: this.hosts.stage(placement, now),
        cell: placement.cell,
        culprits,
        pausedUntil: placement.pausedUntil > now ? placement.pausedUntil : 0,
      });
    }
    return states;
  }

  get hostFaultLimits(): HostFaultLimits {
    return this.hosts.limits;
  }

  /** The fault state of one host, or null when it has none. */
  hostFault(host: HostId, now = Date.now()): HostFaultState | null {
    return this.hostFaults(now).find((s) => formatEnvId(s) === formatEnvId(host)) ?? null;
  }

  /** A thread reported its CPU: an API that keeps too many cores busy moves to the low-priority cell. */
  private noteCpu(actor: ActorHandle, now: number): void {
    const { cores, cpuMs, requests } = recentCpu(actor.links, now);
    // A request still running at the end of a window (an endless loop) makes its cost unbounded.
    const msPerRequest = requests === 0 ? Infinity : cpuMs / requests;
    if (
      !this.cpu.note(actor.spec, cores, msPerRequest, now) ||
      this.faults.placement(actor.spec) !== undefined ||
      actor.inHostCell
    )
      return;
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
    return Math.max(this.faults.placement(api)?.pausedUntil ?? 0, this.hosts.placement(api)?.pausedUntil ?? 0);
  }

  /** Per API (its releases summed: an old one may still be draining), for /anvil/metrics. */
  gauges(): ActorGauges[] {
    const byApi = new Map<string, ActorGauges>();
    for (const actor of this.actors.values()) {
      const { host, key } = actor.spec;
      const id = `${host}\0${key}`;
      let g = byApi.get(id);
      if (g === undefined)
        byApi.set(
          id,
          (g = { host, api: key, threads: 0, sharedThreads: 0, mailbox: 0, isolates: 0, isolateHeapBytes: 0 }),
        );
      g.threads += actor.threadCount;
      g.sharedThreads += actor.sharedThreadCount;
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
    this.quarantine.reap(
      now,
      this.limits.idleMs,
      (api) => {
        for (const actor of this.actors.values())
          if (sameApi(actor.spec, api) && (actor.busy || actor.threadCount > 0)) return true;
        return false;
      },
      (host) => {
        for (const actor of this.actors.values())
          if (actor.inHostCell && sameHost(actor.spec, host) && (actor.busy || actor.threadCount > 0)) return true;
        return false;
      },
    );
    for (const [id, actor] of this.actors) {
      this.watch(actor, now);
      actor.retireIdle(now);
      if (actor.hasOwnThreads && actor.calmDown(now, recentCpu(actor.links, now).cores)) {
        this.log('info', 'API is quiet again; it now runs on a shared thread', {
          api: actor.spec.key,
          host: actor.spec.host,
          cell: actor.cell,
        });
      }
      // Light again, and idle: back to its own cell for its next thread.
      if (actor.cell === this.lowPriorityCell && actor.threadCount === 0 && !actor.busy)
        actor.relocate(this.cellFor(actor, now));
      if (!actor.current && !actor.busy && actor.threadCount === 0) this.actors.delete(id);
    }
  }

  /**
   * A thread with work that has been silent for `stuckAfterMs` is probed; if its event loop does
   * not answer within `stuckAfterMs` more, its cell terminates it; if even that does not stop it
   * (native code that cannot be interrupted, such as an endless SQL query), the cell is killed.
   */
  private watch(actor: ActorHandle, now: number): void {
    for (const link of actor.links) {
      if (link.closed || link.load === 0) continue;
      // A shared thread stuck holds every actor on it: it is looked at sooner.
      const after = actor.isShared(link)
        ? Math.min(this.limits.stuckAfterMs, SHARED_STUCK_AFTER_MS)
        : this.limits.stuckAfterMs;
      if (link.terminateAskedAt > 0) {
        if (now - link.terminateAskedAt > TERMINATE_GRACE_MS) {
          this.log('error', 'stuck thread did not stop; killing its cell', {
            api: actor.spec.key,
            host: actor.spec.host,
            cell: link.cell,
          });
          link.terminateAskedAt = now;
          // The API is why the cell dies, even when its thread was retired by a move and its lost
          // work would not otherwise be counted.
          this.faults.noteLostWork(actor.spec, link.cell, now, true);
          this.control!.kill(link.cell);
        }
      } else if (link.probeSentAt > 0 && now - link.probeSentAt > after) {
        this.log('error', 'thread stuck past the request timeout; terminating it', {
          api: actor.spec.key,
          host: actor.spec.host,
          cell: link.cell,
          thread: link.thread,
        });
        link.terminateAskedAt = now;
        this.control!.terminateThread(link.cell, actor.spec.id, link.thread);
      } else if (link.probeSentAt === 0 && now - link.lastHeard > after) {
        link.probe(now);
      }
    }
  }
}

function sameHost(a: HostId, b: HostId): boolean {
  return a.host === b.host && a.env === b.env;
}
