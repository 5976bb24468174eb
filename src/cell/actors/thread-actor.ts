/**
 * One actor (an API release) served by an actor thread: its runtime, sandbox (its own isolate),
 * engine, line to the router (router-line.ts: a socket, or a channel of the shared thread's
 * connection) and peer socket. A dedicated thread serves one of these; a
 * shared thread serves many, each in its own isolate and context, none seeing another's state.
 * `finished` settles once the actor has retired and everything it had in flight is answered, AFTER_FLOW
 * included: the thread exits then (dedicated) or goes on serving the others (shared).
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { CompiledRelease } from '../../shared/api-model/types.js';
import { builtinDirectives } from '../../directives/catalogue.js';
import { ApiEngine, type ErrorReporter } from '../../engine/api-engine.js';
import { BusyReason } from '../../shared/protocol/busy-reasons.js';
import { emptyFrame, FrameType, u32Frame, type FrameSink } from '../../shared/protocol/frames.js';
import type { SpareData, ThreadData, ThreadToCell } from '../../shared/protocol/cell-messages.js';
import { encodeHello, WIRE_VERSION, type ThreadHello } from '../../shared/protocol/hello.js';
import { decodePeerOffer, notTakenFrame } from '../../shared/protocol/peers.js';
import { decodeRequest, encodeResponse, type EngineRequest } from '../../shared/protocol/requests.js';
import { encodeStats, type ThreadStats } from '../../shared/protocol/stats.js';
import type { Tracer } from '../../shared/tracing/trace-span.js';
import { ActorRuntime } from './actor-runtime.js';
import { BusClient } from './bus-client.js';
import type { CpuShares } from './cpu-shares.js';
import { PeerServer } from './peer-server.js';
import type { RouterLine } from './router-line.js';
import { ServedMeter } from './served-meter.js';
import { SandboxMarker } from '../process/sandbox-markers.js';
import { createSandbox, DEFAULT_SANDBOX_LIMITS, effectiveLimits } from './sandbox-setup.js';

/** How long a retiring actor waits for its peers to close their connections. */
const PEER_DRAIN_MS = 5_000;
/**
 * What the actor's thread reports of it every 2 s: isolate heap for /anvil/metrics, its own CPU for
 * the router's scheduling, and the calls that went straight between it and its peers (the router
 * did not see them). An actor that did next to nothing and holds no isolate stays silent.
 */
const STATS_EVERY_MS = 2_000;
/**
 * The first report of an actor on a thread of its own comes sooner: it got that thread because it
 * kept a shared one busy, and the router decides from this report whether it is CPU-heavy (the
 * low-priority cell) while it competes with its former thread-mates at their priority.
 */
const FIRST_OWN_REPORT_MS = 500;
/**
 * The longest stretch a shared thread lets an actor hold it for: the default CPU limit of a call.
 * An API whose api.yaml asks for more CPU per call (`limits.cpuMs`) is given threads of its own
 * before it runs anything on a shared one.
 */
export const SHARED_SLICE_MS = DEFAULT_SANDBOX_LIMITS.cpuMs;

/**
 * On a shared thread, after a stretch of an actor's code this long, its next request waits for the
 * thread's next turn: the other actors' frames come first.
 */
const YIELD_AFTER_MS = 2;

/** What the thread gives each of its actors. */
export interface ActorThreadServices {
  /** The thread serves many actors (each request of one may have to wait its turn). */
  shared: boolean;
  toCell(message: ThreadToCell): void;
  /** The thread's CPU, shared out between its actors. */
  cpu: CpuShares;
  /** A unique suffix for the actor's peer socket on this thread. */
  peerSuffix: string;
  /** The thread's tracer, when tracing is on. */
  tracer: Tracer | null;
}

export class ThreadActor {
  readonly finished: Promise<void>;
  readonly runtime: ActorRuntime;
  private finish!: () => void;
  private readonly engine: ApiEngine;
  private readonly writer: FrameSink;
  private readonly bus: BusClient;
  private readonly peers: PeerServer;
  private readonly sandbox: ReturnType<typeof createSandbox>;
  private readonly served = new ServedMeter();
  private readonly statsTimer: NodeJS.Timeout;
  private readonly reportError: ErrorReporter;
  private inFlight = 0;
  /** Requests that arrived since the last stats report. */
  private arrived = 0;
  private retiring = false;
  private exiting = false;
  /** On a shared thread: requests waiting for the thread's next turn, and whether one is due. */
  private readonly queued: Array<{ number: number; request: EngineRequest }> = [];
  private turnDue = false;
  /** Its calls may hold a thread longer than a shared thread's slice (SHARED_SLICE_MS). */
  private readonly longCalls: boolean;
  /** On a shared thread: it said it keeps the thread busy; its requests go back to the router for its own thread. */
  private promoted = false;

  constructor(
    private readonly data: ThreadData,
    private readonly services: ActorThreadServices,
    /** Its line to the router: a socket of its own, or a channel of its shared thread's connection. */
    private readonly line: RouterLine,
  ) {
    this.finished = new Promise((resolve) => (this.finish = resolve));
    const { spec } = data;
    const release = JSON.parse(readFileSync(spec.compiledFile, 'utf8')) as CompiledRelease;
    const { toCell } = services;
    const runtime = new ActorRuntime(spec, release, (level, msg, fields) => {
      toCell({ type: 'log', level, msg, fields: { api: spec.key, host: spec.host, release: spec.release, ...fields } });
    });
    this.runtime = runtime;
    runtime.tracer = services.tracer;
    this.reportError = (event) => {
      toCell({
        type: 'log',
        level: 'warn',
        msg: 'directive error',
        fields: { event: 'directive-error', api: spec.key, host: spec.host, release: spec.release, ...event },
      });
    };
    const marker =
      data.marker === null
        ? undefined
        : new SandboxMarker(data.marker.fd, data.marker.slot, data.marker.shared ? spec.id : undefined);
    this.sandbox = createSandbox(
      release,
      spec.sandbox.maxima,
      (event) => {
        runtime.sandboxBreaches.add(event.kind);
        toCell({
          type: 'log',
          level: 'warn',
          msg: `custom directive ${event.kind === 'crash' ? 'broke its sandbox' : `over its ${event.kind} limit`}`,
          fields: { api: spec.key, host: spec.host, release: spec.release, ...event },
        });
      },
      marker?.enter,
    );
    this.longCalls =
      this.sandbox !== null &&
      effectiveLimits(release.definition.limits ?? {}, spec.sandbox.maxima).cpuMs > SHARED_SLICE_MS;
    const sandbox = this.sandbox;
    if (sandbox !== null) runtime.resource('sandbox', () => sandbox);
    const customDirectives = sandbox?.directives() ?? new Map();
    this.engine = new ApiEngine(
      release,
      runtime,
      (name) => builtinDirectives.get(name) ?? customDirectives.get(name),
      this.reportError,
    );

    this.writer = line.writer;
    const hello: ThreadHello = {
      version: WIRE_VERSION,
      token: data.token,
      cell: data.cell,
      actor: spec.id,
      thread: data.thread,
    };
    this.bus = new BusClient(this.writer, hello);
    runtime.bus = this.bus;
    this.peers = new PeerServer(
      `${data.socketPath}.${services.peerSuffix}`,
      data.token,
      (number, request, peerWriter) => this.timed(() => this.serve(number, request, peerWriter, true)),
      () => {
        if (this.retiring) void this.exitWhenIdle();
      },
      (peer) =>
        runtime.log(
          'error',
          `refused a peer thread of cell ${peer.cell}: it speaks wire version ${peer.version}, this thread speaks ${WIRE_VERSION}`,
          { peerActor: peer.actor, version: peer.version },
        ),
    );
    line.listen(
      (type, payload) => this.yieldIfLong(this.timed(() => this.frame(type, payload))),
      () => {
        this.bus.failAll();
        this.retire();
      },
    );
    services.cpu.join(this);
    this.statsTimer = setInterval(() => this.report(), STATS_EVERY_MS);
    this.statsTimer.unref();
    if (!services.shared) setTimeout(() => this.report(), FIRST_OWN_REPORT_MS).unref();
  }

  /** Listens for peers and says hello to the router: from here on the actor serves. */
  async start(): Promise<void> {
    const peerAddress = (await this.peers.listen()) ? this.peers.address : undefined;
    this.writer.write(
      encodeHello({
        version: WIRE_VERSION,
        token: this.data.token,
        cell: this.data.cell,
        actor: this.data.spec.id,
        thread: this.data.thread,
        peer: peerAddress,
      }),
    );
    // On a shared thread, an API whose calls may run longer than the slice goes to threads of its
    // own at once: whatever the router sends here meanwhile goes back to it (take).
    if (this.services.shared && this.longCalls) this.sayBusy(BusyReason.LongCalls);
  }

  /**
   * Tells the router this actor keeps a core busy (front/scheduling/actor-handle.ts: it gets threads of its
   * own). On a shared thread, from then on its requests that have not begun go back to the router,
   * which sends them to its own thread.
   */
  sayBusy(reason: BusyReason): void {
    if (this.exiting || this.promoted) return;
    this.writer.write(u32Frame(FrameType.Busy, reason));
    if (this.services.shared) this.promoted = true;
  }

  /** Runs `work` as a stretch of this actor's own code, timed for its share of the thread's CPU. */
  private timed(work: () => void): number {
    const started = performance.now();
    const sandboxBefore = this.sandbox?.spentCpuNs ?? 0n;
    let ms = 0;
    try {
      work();
    } finally {
      ms = performance.now() - started;
      this.services.cpu.ran(this, ms, Number((this.sandbox?.spentCpuNs ?? 0n) - sandboxBefore) / 1e6);
    }
    return ms;
  }

  /** On a shared thread, after it said it is busy: its requests not begun go back to the router (a retiring actor serves what it has). */
  private get givesBack(): boolean {
    return this.promoted && !this.retiring;
  }

  /**
   * A request from the router. On a dedicated thread it runs at once. On a shared thread it runs at
   * once too, unless this actor's last stretch was long (it waits for the thread's next turn, after
   * the others' frames) or this actor said it is busy (it goes back to the router: notTaken).
   */
  private take(number: number, request: EngineRequest): void {
    if (!this.services.shared) return this.serve(number, request, this.writer, false);
    if (this.givesBack) return this.writer.write(notTakenFrame(number));
    if (this.turnDue) {
      this.queued.push({ number, request });
      return;
    }
    this.serve(number, request, this.writer, false);
  }

  /** After a long stretch on a shared thread: the next request waits for the next turn. */
  private yieldIfLong(ms: number): void {
    if (!this.services.shared || ms < YIELD_AFTER_MS || this.turnDue) return;
    this.turnDue = true;
    setImmediate(this.nextTurn);
  }

  private readonly nextTurn = (): void => {
    this.turnDue = false;
    while (this.queued.length > 0) {
      if (this.givesBack) {
        for (const { number } of this.queued.splice(0)) this.writer.write(notTakenFrame(number));
        return;
      }
      const next = this.queued.shift()!;
      const ms = this.timed(() => this.serve(next.number, next.request, this.writer, false));
      if (ms >= YIELD_AFTER_MS && this.queued.length > 0) {
        this.yieldIfLong(ms);
        return;
      }
    }
    if (this.retiring) void this.exitWhenIdle();
  };

  private frame(type: number, payload: Buffer): void {
    if (type === FrameType.Request) {
      const { number, request } = decodeRequest(payload);
      this.take(number, request);
    } else if (type === FrameType.CallResult) {
      this.bus.settle(payload);
    } else if (type === FrameType.EnqueueResult) {
      this.bus.settleEnqueue(payload);
    } else if (type === FrameType.Ping) {
      this.writer.write(emptyFrame(FrameType.Pong));
    } else if (type === FrameType.Peer) {
      this.bus.offer(decodePeerOffer(payload));
    } else if (type === FrameType.PeerStop) {
      this.peers.stop();
    } else if (type === FrameType.Retire) {
      this.retire();
    }
  }

  private serve(number: number, request: EngineRequest, to: FrameSink, fromPeer: boolean): void {
    this.inFlight++;
    this.arrived++;
    this.services.cpu.check();
    const startedAt = fromPeer ? performance.now() : 0;
    let pending: void | Promise<void> = undefined;
    try {
      pending = this.engine.handle(request, (response) => {
        to.write(encodeResponse(number, response));
        if (fromPeer)
          this.served.observe(response.route ?? '', response.status, (performance.now() - startedAt) / 1000);
      });
    } catch (error) {
      this.failed(request, error);
    }
    if (pending === undefined) this.requestOver();
    else {
      pending.then(
        () => this.requestOver(),
        (error: unknown) => {
          this.failed(request, error);
          this.requestOver();
        },
      );
    }
  }

  /** A defect of the engine (directive errors never land here). */
  private failed(request: EngineRequest, error: unknown): void {
    this.reportError({
      requestId: request.id,
      label: '(thread)',
      directive: '(thread)',
      status: 500,
      message: String(error),
      pass: 'main',
    });
  }

  /** A request is over (its AFTER_FLOW pass included). */
  private requestOver(): void {
    this.inFlight--;
    if (this.retiring) void this.exitWhenIdle();
  }

  private report(): void {
    if (this.exiting) return;
    const { cpuMs, windowMs } = this.services.cpu.take(this);
    const isolates = this.sandbox?.isolates ?? 0;
    const requests = this.arrived;
    this.arrived = 0;
    const direct = this.directCounts();
    const sandboxCpu = this.sandbox?.takeCpu();
    if (isolates === 0 && cpuMs < 1 && !anythingToReport(direct, sandboxCpu)) return;
    this.writer.write(
      encodeStats({
        isolateHeapBytes: this.sandbox?.heapBytes() ?? 0,
        isolates,
        cpuMs,
        windowMs,
        requests,
        ...direct,
        sandboxCpu,
      }),
    );
  }

  /** What the router did not see and counts from the thread's report: peer calls, quota refusals. */
  private directCounts(): Pick<
    ThreadStats,
    'served' | 'peerCalls' | 'quotaRefusals' | 'logFilesRemoved' | 'sandboxBreaches' | 'outgoing'
  > {
    const peerCalls = this.bus.takePeerCalls();
    const { runtime } = this;
    return {
      served: this.served.take(),
      peerCalls: peerCalls > 0 ? peerCalls : undefined,
      quotaRefusals: runtime.refusals.take(),
      logFilesRemoved: runtime.logFilesRemoved.take(),
      sandboxBreaches: runtime.sandboxBreaches.take(),
      outgoing: runtime.outgoing.take(),
    };
  }

  /** No new work: peers are told to call through the router; finishes once everything is answered. */
  retire(): void {
    if (this.retiring) return;
    this.retiring = true;
    this.peers.stop();
    // A peer that never closes its connection (stuck) does not keep this actor alive for long.
    setTimeout(() => {
      this.peers.close();
      void this.exitWhenIdle();
    }, PEER_DRAIN_MS).unref();
    void this.exitWhenIdle();
  }

  private async exitWhenIdle(): Promise<void> {
    if (this.inFlight > 0 || this.queued.length > 0 || this.peers.open > 0 || this.exiting) return;
    this.exiting = true;
    clearInterval(this.statsTimer);
    await this.runtime.close();
    const direct = this.directCounts();
    const sandboxCpu = this.sandbox?.takeCpu();
    if (anythingToReport(direct, sandboxCpu)) {
      this.writer.write(
        encodeStats({ isolateHeapBytes: 0, isolates: 0, cpuMs: 0, windowMs: 1, requests: 0, ...direct, sandboxCpu }),
      );
    }
    this.services.cpu.leave(this);
    this.peers.close();
    this.line.end(this.finish);
  }
}

function anythingToReport(direct: Record<string, unknown>, sandboxCpu: ThreadStats['sandboxCpu']): boolean {
  return Object.values(direct).some((counted) => counted !== undefined) || sandboxCpu !== undefined;
}

/** A connection to the router, with a spare's hello (its actor's hello follows once it has one). */
export function dial({ socketPath, token, cell }: SpareData): Socket {
  const connection = connect(socketPath);
  connection.setNoDelay(true);
  connection.on('error', () => {
    // 'close' follows; a spare's broken connection is replaced when it gets an API.
  });
  connection.write(encodeHello({ version: WIRE_VERSION, token, cell, actor: '', thread: -1 }));
  return connection;
}
