/**
 * Runs custom directives (SPEC §7) in isolated-vm: one long-lived sandbox (an isolate and one
 * context, sandbox-context.ts) per API release per actor thread. A directive's module is evaluated
 * once; each call is one synchronous call into the isolate with its input copied in and its result
 * copied out (~10 µs for a trivial directive, where a fresh context per call cost ~1 ms). A call that
 * awaits (`await state.run(…)`) is continued by one more synchronous call per settled operation.
 *
 * Calls of the API on this thread share the context, as requests of a Worker share its isolate:
 * module-level state may persist between them. Limits per call: CPU time (every stretch of the
 * directive runs with a timeout of the CPU it has left; the SQL its state operations run counts
 * too, see HOST_CHECK_EVERY_MS), wall time (the same timeout, and a watchdog
 * for calls that await), and the isolate's memory (checked after every call, so heap growth across
 * calls counts). A breach while directive code runs disposes the sandbox: the culprit fails with
 * the breach, the calls waiting in it fail with 503, and the next call gets a fresh sandbox.
 *
 * The isolate runs on the actor thread itself. A fatal allocation aborts the cell process (the
 * router contains it) exactly as it did when calls ran on isolated-vm's own threads.
 */
import { performance } from 'node:perf_hooks';
import type { SandboxLimits } from '../../shared/api-model/types.js';
import type { DirectiveContext } from '../../engine/context.js';
import type { DirectiveDefinition } from '../../engine/directive-types.js';
import { Errors, toStatusError, type AnvilError } from '../../shared/errors.js';
import type { SandboxCpuCount } from '../../shared/protocol/stats.js';
import { breachError, outcomeError, type BreachKind } from './call-errors.js';
import { DirectivePositions } from './directive-positions.js';
import { BridgeOp, type BridgeOpCode } from './bridge-ops.js';
import { CpuBound } from './cpu-bound.js';
import { bootstrapSnapshot } from './bootstrap-snapshot.js';
import { CpuMeter } from './cpu-meter.js';
import { HostBridge, type BridgeServices, type HostReply, type NestedCalls } from './host-bridge.js';
import { isTimeout, SandboxContext, type ContextShape } from './sandbox-context.js';
import { SandboxSpares } from './sandbox-spares.js';
import { countCpu, MAX_NESTED_CALLS, overrun, timeoutOf, type Call, type Outcome } from './sandbox-call.js';

/**
 * The thread's CPU clock marks, shared by every sandbox on the thread (their stretches all run on
 * it, one at a time): with a hundred APIs on a shared thread, one clock read per few milliseconds
 * in all, not one per call of each, and one descriptor, not one per sandbox.
 */
let threadCpuBound: CpuBound | null = null;
/** The longest a first call waits for the spare being made (it is made in ~3–5 ms). */
const SPARE_WAIT_MS = 20;
/** A shared thread's spare context (keepSpareContexts), taken by its next sandbox. */
let threadSpares: SandboxSpares | null = null;

/**
 * From now on this thread keeps a sandbox context ready for the next sandbox that needs one: a
 * shared thread, where APIs arrive one after another and each first call would otherwise make its own.
 * `memoryMb`: the memory limit of the APIs to expect; the thread's snapshot and its first spare are
 * made now, like theirs, before any API arrives.
 */
export function keepSpareContexts(memoryMb: number): void {
  threadSpares ??= new SandboxSpares();
  threadSpares.expect(contextShape(memoryMb));
}

/** What the contexts of a sandbox with this memory limit are made of. */
function contextShape(memoryMb: number): ContextShape {
  const bootstrap = bootstrapSnapshot();
  return {
    memoryMb,
    // What the host counts a value against once it holds it (the API's host memory limit is the same figure).
    valueMaxBytes: memoryMb * MiB,
    snapshot: bootstrap.blob,
    lockdown: bootstrap.lockdown,
  };
}

/** How often calls that await are checked against their wall time. */
const WATCH_EVERY_MS = 20;
/**
 * The heap is read (~3 µs) after every this many calls, and after any call once this much isolate
 * CPU time went by since the last read: growing the heap takes CPU time (writing 1 MiB costs ~0.1
 * ms here), so no run of calls can grow it by much unseen, and the isolate's own limit stops a call
 * that overshoots.
 */
const HEAP_CHECK_EVERY_CALLS = 32;
const HEAP_CHECK_EVERY_CPU_NS = 1_000_000n;
const MiB = 1024 * 1024;
/**
 * Below this share of its timeout spent on a core, a stretch its timeout stopped was starved (see
 * `stretch`). A tenth, not more: under an ordinary load (two test instances with their traffic on
 * two cores) a runaway loop's thread gets a third to a half of a core, and must still be blamed.
 */
const STARVED_SHARE = 0.1;
/**
 * How much host work (SQL: SandboxOptions.hostWorkMs) a stretch may do between two looks at its
 * call's budget, ms. isolated-vm does not count time spent in a host function to the isolate, and
 * its timeout does not stop it (measured: a 300 ms host function under a 50 ms timeout returned
 * normally), so the host's own clock of that work is read after each state operation, and the
 * budget looked at once per millisecond of it.
 */
const HOST_CHECK_EVERY_MS = 1;

export interface SandboxOptions {
  limits: SandboxLimits;
  directiveCode: Readonly<Record<string, string>>;
  /** Their source maps, by name: a thrown error's message ends with where the author's file threw it. */
  directiveMaps?: Readonly<Record<string, string>>;
  services: BridgeServices;
  /** A breach or a failure of the sandbox itself, for the instance log. */
  report(event: { directive: string; kind: BreachKind; message: string }): void;
  /** Called before anything runs in an isolate (the cell's fault marker, cell/process/sandbox-markers.ts). */
  enter?: () => void;
  /**
   * A running total (ms) of the work this thread did that a state operation may do on a call's
   * behalf and that is not the isolate's: its SQL (directives/database/sql-clock.ts). What a stretch adds to
   * it is counted to the call's CPU time. Not given: nothing is.
   */
  hostWorkMs?: () => number;
}

const nothing = (): void => {};
const noHostWork = (): number => 0;
const msToNs = (ms: number): bigint => (ms > 0 ? BigInt(Math.round(ms * 1e6)) : 0n);

export class Sandbox {
  /** The context calls share; null before the first call and after a breach disposed it. */
  private current: SandboxContext | null = null;
  private readonly calls = new Map<number, Call>();
  private nextCallId = 1;
  /** Calls that ended during the last stretch (or breach); finished by `finishEnded`. */
  private ended: Call[] = [];
  private waiting = 0;
  private watchdog: NodeJS.Timeout | null = null;
  private readonly cpu = new CpuMeter();
  private readonly cpuBound = (threadCpuBound ??= new CpuBound());
  /** The host work clock (SandboxOptions.hostWorkMs) as the current stretch began, and when its budget is looked at next. */
  private readonly hostWorkMs: () => number;
  private hostWorkAtStart = 0;
  private hostCheckAtMs = HOST_CHECK_EVERY_MS;
  private callsSinceHeapCheck = 0;
  private cpuSinceHeapCheckNs = 0n;
  private closed = false;
  /** Every stretch's charge so far (isolate CPU and host work, bounded by the thread's CPU). */
  private spentNs = 0n;
  private readonly nested: NestedCalls = {
    has: (name) => Object.hasOwn(this.options.directiveCode, name),
    run: (parentId, ctx, name, params) => {
      const parent = this.calls.get(parentId);
      if (parent === undefined) throw Errors.sandboxBadCall(`${name}: the call that ran it is over`);
      return this.call(name, ctx, params, parent);
    },
  };

  private readonly positions: DirectivePositions;

  constructor(private readonly options: SandboxOptions) {
    this.hostWorkMs = options.hostWorkMs ?? noHostWork;
    this.positions = new DirectivePositions(options.directiveMaps ?? {});
  }

  /** The custom directives of the release, as directives the engine can run. */
  directives(): Map<string, DirectiveDefinition<Record<string, unknown>>> {
    const out = new Map<string, DirectiveDefinition<Record<string, unknown>>>();
    for (const name of Object.keys(this.options.directiveCode)) {
      out.set(name, {
        name,
        summary: `custom directive ${name}`,
        // Custom directives take any parameters; they check their own config.
        params: { type: 'object', properties: {}, additionalProperties: true },
        run: (ctx, config) => this.call(name, ctx, config),
      });
    }
    return out;
  }

  /** Isolates alive now: 0 before the first call and after a breach, else 1. */
  get isolates(): number {
    return this.current === null ? 0 : 1;
  }

  heapBytes(): number {
    return this.current?.heapBytes() ?? 0;
  }

  /** CPU per call by directive since the last take, for the thread's stats (undefined: no calls). */
  /** The CPU its directives have used so far (ns): isolate time and the host work counted to it. */
  get spentCpuNs(): bigint {
    return this.spentNs;
  }

  takeCpu(): SandboxCpuCount[] | undefined {
    return this.cpu.take();
  }

  close(): void {
    this.closed = true;
    if (this.watchdog !== null) clearInterval(this.watchdog);
    this.current?.dispose();
  }

  /**
   * Runs one call. Returns nothing when the directive finished within its first stretch (most do),
   * a promise when it awaits; throws the directive's failure or the breach. `parent`: the call
   * whose `state.run` asked for this one.
   */
  call(
    name: string,
    ctx: DirectiveContext,
    config: Record<string, unknown>,
    parent: Call | null = null,
  ): void | Promise<void> {
    return this.begin(name, ctx, config, parent, true);
  }

  /** `call`; `mayWait`: it may first wait once for the thread's spare context (see below). */
  private begin(
    name: string,
    ctx: DirectiveContext,
    config: Record<string, unknown>,
    parent: Call | null,
    mayWait: boolean,
  ): void | Promise<void> {
    const code = this.options.directiveCode[name];
    if (code === undefined) throw Errors.sandboxUnknownDirective(name);
    if (this.closed) throw Errors.sandboxClosed();
    const depth = parent === null ? 0 : parent.depth + 1;
    if (depth > MAX_NESTED_CALLS) throw Errors.sandboxTooDeep(name, MAX_NESTED_CALLS);
    // A request runs one custom directive at a time: none from inside another (state.run →
    // ExecuteIf would re-enter the isolate while it runs), except one its caller's state.run
    // started, which runs once the caller's stretch is over.
    if (parent === null)
      for (const other of this.calls.values())
        if (other.ctx === ctx && other.end === null)
          throw Errors.sandboxBadCall(`${name}: a custom directive cannot run from inside ${other.name}`);
    if (mayWait && (this.current === null || this.current.disposed)) {
      // The thread's spare is on its way: the call waits for it once (another sandbox may take it
      // first) rather than make a context beside it; the checks above are made again after.
      const coming = threadSpares?.comingFor(this.shape(), SPARE_WAIT_MS) ?? null;
      if (coming !== null) return coming.then(() => this.begin(name, ctx, config, parent, false));
    }
    const box = this.context();
    const id = this.nextCallId++;
    const call: Call = {
      id,
      name,
      box,
      bridge: new HostBridge(
        ctx,
        name,
        this.options.services,
        (ticket, reply) => this.settle(call, ticket, reply),
        this.nested,
        id,
      ),
      ctx,
      budget: parent?.budget ?? { startedAt: performance.now(), cpuNs: 0n },
      parent,
      depth,
      cpuNs: 0n,
      hostOverrun: null,
      end: null,
      waiter: null,
    };
    this.calls.set(id, call);

    const result = this.stretch(call, (timeout) => {
      const broken = box.load(name, code, timeout);
      if (broken !== null) return `500 ${broken}`;
      return box.call(id, name, JSON.stringify(config), ctx.id, timeout);
    });
    if (result !== 1) this.end(call, call.bridge.failure(outcomeError(result as Outcome, this.positions.locate)));
    this.finishEnded();
    if (call.end !== null) {
      if (call.end.error !== null) throw call.end.error;
      return;
    }
    this.waiting++;
    if (this.watchdog === null) this.watchdog = setInterval(() => this.watchWall(), WATCH_EVERY_MS).unref();
    return new Promise<void>((resolve, reject) => {
      call.waiter = { resolve, reject };
    });
  }

  /** The sandbox calls share, made on first use and after a breach disposed the last one. */
  private context(): SandboxContext {
    if (this.current !== null && !this.current.disposed) return this.current;
    const enter = this.options.enter ?? nothing;
    enter();
    const shape = this.shape();
    const spare = threadSpares?.take(shape) ?? undefined;
    this.current = new SandboxContext(
      { ...shape, host: (op, callId, a, b) => this.host(op, callId, a, b), enter },
      spare,
    );
    return this.current;
  }

  /** What this sandbox's context is made of. */
  private shape(): ContextShape {
    return contextShape(this.options.limits.memoryMb);
  }

  /** `state` operations from inside the isolate, and the end of a call that awaited (`done`). */
  private host(op: BridgeOpCode, callId: number, a: unknown, b: unknown): HostReply | undefined {
    const call = this.calls.get(callId);
    if (op === BridgeOp.done) {
      if (call !== undefined) this.end(call, call.bridge.failure(outcomeError(a as Outcome, this.positions.locate)));
      return undefined;
    }
    if (call === undefined) return { error: { status: 500, message: 'the call is over; state can no longer be used' } };
    if (call.hostOverrun !== null)
      return { error: toStatusError(breachError(call.name, call.hostOverrun, this.options.limits, '')) };
    const reply = call.bridge.handle(op, a, b);
    const hostMs = this.hostWorkMs() - this.hostWorkAtStart;
    if (hostMs >= this.hostCheckAtMs) {
      this.hostCheckAtMs = hostMs + HOST_CHECK_EVERY_MS;
      this.checkHostWork(call, hostMs);
    }
    return reply;
  }

  /**
   * The host's work for the call (its SQL: native code nothing interrupts) is counted to its CPU
   * time with the isolate's, bounded by its thread's CPU like any stretch (cpu-bound.ts); past its
   * CPU or wall time, the call's next operations are refused and its stretch ends in that breach.
   */
  private checkHostWork(call: Call, hostMs: number): void {
    const used = call.budget.cpuNs + this.cpuBound.refine(call.box.cpuUnread() + msToNs(hostMs));
    if (Number(used) / 1e6 > this.options.limits.cpuMs) call.hostOverrun = 'cpu';
    else if (performance.now() - call.budget.startedAt > this.options.limits.wallMs) call.hostOverrun = 'wall';
  }

  /** The reply of a `state.run` the call awaits: its continuation runs now, as one more stretch. */
  private settle(call: Call, ticket: number, reply: HostReply): void {
    if (call.end !== null || call.box.disposed) return;
    // Past its wall time while it waited (before the watchdog saw it): it ends without running on.
    if (performance.now() - call.budget.startedAt > this.options.limits.wallMs) this.expire(call);
    else this.stretch(call, (timeout) => call.box.settle(call.id, ticket, reply, timeout));
    this.finishEnded();
  }

  /**
   * Runs directive code of `call` synchronously, with a timeout of what is left of its CPU time,
   * counting the isolate's CPU time to it. A breach (timeout, memory, an isolate that failed, a
   * stretch that ended past the call's CPU time) disposes the context and fails every call in it.
   *
   * The timeout is the only way to stop code running on this thread, and it runs on the clock, as
   * does isolated-vm's CPU time: a thread that waits for a core (a busy host, a low-priority cell)
   * uses its time without running. A long stretch is charged no more than its thread's CPU time
   * over it (cpu-bound.ts). A stretch the timeout stopped is a CPU breach (as on an idle host, where
   * the clock and the CPU agree), unless it was charged less than STARVED_SHARE of that time: then
   * it was starved, not guilty, and its call fails with 503 (busy), no breach counted.
   */
  private stretch(call: Call, run: (timeout: number) => unknown): unknown {
    const { box } = call;
    const now = performance.now();
    this.cpuBound.beforeStretch(now);
    const timeout = timeoutOf(call, this.options.limits, now);
    this.hostWorkAtStart = this.hostWorkMs();
    this.hostCheckAtMs = HOST_CHECK_EVERY_MS;
    let result: unknown;
    try {
      result = run(timeout);
    } catch (error) {
      const disposed = box.disposedAfterFailure();
      const charged = this.charge(call);
      if (disposed || !isTimeout(error)) this.breach(call, disposed ? 'memory' : 'crash', error);
      else if (call.hostOverrun !== null) this.breach(call, call.hostOverrun, error);
      else {
        const kind = overrun(call, this.options.limits);
        const ran = this.cpuBound.ran(charged);
        if (kind === null && Number(ran) / 1e6 < timeout * STARVED_SHARE) this.starved(call, timeout, ran);
        else this.breach(call, kind ?? 'cpu', error);
      }
      return undefined;
    }
    this.charge(call);
    if (call.hostOverrun !== null || Number(call.budget.cpuNs) / 1e6 > this.options.limits.cpuMs) {
      this.breach(call, call.hostOverrun ?? 'cpu', null);
      return undefined;
    }
    return result;
  }

  /**
   * Counts to the call the CPU its stretch just used (isolated-vm's charge and the host's work for
   * it, bounded: cpu-bound.ts); returns that charge.
   */
  private charge(call: Call): bigint {
    const now = this.hostWorkMs();
    const charged = call.box.cpuSinceLastRead() + msToNs(now - this.hostWorkAtStart);
    this.hostWorkAtStart = now;
    const refined = this.cpuBound.refine(charged);
    this.spentNs += refined;
    countCpu(call, refined);
    return charged;
  }

  /**
   * Stopped by its timeout while its thread mostly waited: 503, and not counted as a breach (the
   * host was busy, not the directive). Its code was cut off mid-way, so its context goes too.
   */
  private starved(call: Call, timeout: number, usedNs: bigint): void {
    const failure = Errors.sandboxBusy(call.name, timeout, (Number(usedNs) / 1e6).toFixed(1));
    for (let c: Call | null = call; c !== null; c = c.parent) this.end(c, failure);
    this.reset(call.box, `${call.name} was stopped on a busy host`);
  }

  /** The calls that ran this one (state.run) fail with its breach: it is theirs too (shared limits). */
  private breach(call: Call, kind: BreachKind, error: unknown): void {
    const failure = this.breachError(call.name, kind, error instanceof Error ? error.message : String(error));
    for (let c: Call | null = call; c !== null; c = c.parent) this.end(c, failure);
    this.reset(call.box, `${call.name} ${kind === 'crash' ? 'broke it' : `breached its ${kind} limit`}`);
  }

  private breachError(name: string, kind: BreachKind, text: string): AnvilError {
    const error = breachError(name, kind, this.options.limits, text);
    this.options.report({ directive: name, kind, message: error.message });
    return error;
  }

  /** Disposes a context; the calls still in it fail (their state was in it). */
  private reset(box: SandboxContext, why: string): void {
    box.dispose();
    if (this.current === box) this.current = null;
    for (const other of this.calls.values()) {
      if (other.box === box) this.end(other, Errors.sandboxReset(other.name, why));
    }
  }

  /** Records how a call ended (the first end counts); `finishEnded` finishes it. */
  private end(call: Call, error: AnvilError | null): void {
    if (call.end !== null) return;
    call.end = { error };
    this.ended.push(call);
  }

  /** Finishes the calls that ended, and settles the engine's promise of those that awaited. */
  private finishEnded(): void {
    while (this.ended.length > 0) {
      const batch = this.ended;
      this.ended = [];
      for (const call of batch) {
        this.finish(call);
        if (call.waiter === null) continue;
        this.waiting--;
        const { error } = call.end!;
        if (error === null) call.waiter.resolve();
        else call.waiter.reject(error);
      }
    }
    if (this.waiting === 0 && this.watchdog !== null) {
      clearInterval(this.watchdog);
      this.watchdog = null;
    }
  }

  /**
   * The call is over: its bridge closes, its CPU is counted, and its context's heap is checked (see
   * HEAP_CHECK_EVERY_CALLS) — over the memory limit after a call is a memory breach of that call, so
   * growth across calls counts.
   */
  private finish(call: Call): void {
    if (!this.calls.delete(call.id)) return;
    call.bridge.close();
    this.cpu.observe(call.name, Number(call.cpuNs) / 1e9);
    // Tracing on: the entry's span adds up the CPU of its calls (state.run's included).
    call.ctx.traceSpan?.add('anvil.sandbox.cpu_us', Math.round(Number(call.cpuNs) / 1e3));
    const { box } = call;
    if (box.disposed) return;
    this.cpuSinceHeapCheckNs += call.cpuNs;
    if (++this.callsSinceHeapCheck < HEAP_CHECK_EVERY_CALLS && this.cpuSinceHeapCheckNs < HEAP_CHECK_EVERY_CPU_NS)
      return;
    this.callsSinceHeapCheck = 0;
    this.cpuSinceHeapCheckNs = 0n;
    if (box.heapBytes() > this.options.limits.memoryMb * MiB) {
      const error = this.breachError(call.name, 'memory', '');
      if (call.end!.error === null) call.end = { error };
      this.reset(box, `${call.name} breached its memory limit`);
    }
  }

  /**
   * Calls that await past their wall time fail with 504. None of their code is running, so the
   * context is kept; it forgets their pending operations (replies that come later are dropped).
   */
  private watchWall(): void {
    const now = performance.now();
    for (const call of this.calls.values()) {
      if (call.waiter !== null && call.end === null && now - call.budget.startedAt > this.options.limits.wallMs)
        this.expire(call);
    }
    this.finishEnded();
  }

  /** A call that waits is past its wall time: 504, and the context forgets what it awaits. */
  private expire(call: Call): void {
    this.end(call, this.breachError(call.name, 'wall', ''));
    try {
      if (!call.box.disposed) call.box.forget(call.id);
    } catch (error) {
      this.reset(call.box, `forgetting ${call.name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
