import ivm from 'isolated-vm';
import { DIRECTIVE_GLOBAL } from '../../shared/api-model/types.js';
import { bridgeCodes, EntryKind, type BridgeOpCode } from './bridge-ops.js';

/**
 * The one host function a context gets: `state` operations of a call, and `done` of a call that
 * awaited. `op` is what the bootstrap sends: a BridgeOp code (anything else is refused).
 */
export type HostFunction = (op: BridgeOpCode, callId: number, a: unknown, b: unknown) => unknown;

/** The bridge's codes, copied into each new context once (the bootstrap keeps them as constants). */
export const codesCopy = new ivm.ExternalCopy(bridgeCodes);

/**
 * How a context finishes the bootstrap's lockdown (bootstrap.js `builtinLockdown`): "snapshot",
 * only what V8 changes when it makes a context from the snapshot; "thorough", every built-in walked
 * again, when the check (bootstrap-snapshot.ts) found that V8 leaves some other one open on this build.
 */
export type LockdownMode = 'snapshot' | 'thorough';

/** What every context of one kind is made of: a sandbox made like another can take its place. */
export interface ContextShape {
  memoryMb: number;
  /** The most a value a directive hands the host may take (the API's memory limit, bytes): the bootstrap refuses a bigger one before it is copied. */
  valueMaxBytes: number;
  /** The bootstrap, run once into a snapshot; every isolate of the thread starts from it. */
  snapshot: ivm.ExternalCopy<ArrayBuffer>;
  /** How each context finishes the snapshot's lockdown (bootstrap-snapshot.ts). */
  lockdown: LockdownMode;
}

export interface ContextOptions extends ContextShape {
  host: HostFunction;
  /** Called before anything runs in the isolate: flags the thread as running tenant code (cell/process/sandbox-markers.ts). */
  enter: () => void;
}

const refuseHost: HostFunction = () => {
  throw new Error('this context has no sandbox yet');
};

/**
 * An isolate with its context, the bootstrap installed, no directive code in it yet. Its host
 * function is set once, by the sandbox that takes it: until then nothing can call it.
 */
export class ContextParts {
  host: HostFunction = refuseHost;
  taken = false;
  private installed: ivm.Reference<(...args: unknown[]) => unknown> | null = null;

  private constructor(
    readonly shape: ContextShape,
    readonly isolate: ivm.Isolate,
    readonly context: ivm.Context,
  ) {}

  /** The bootstrap's entry (bootstrap.js `__anvilInstall`'s result). */
  get entry(): ivm.Reference<(...args: unknown[]) => unknown> {
    return this.installed!;
  }

  /** Made here and now, on this thread. */
  static make(shape: ContextShape): ContextParts {
    const isolate = isolateOf(shape);
    try {
      const parts = new ContextParts(shape, isolate, isolate.createContextSync());
      parts.installed = parts.context.evalClosureSync(INSTALL, parts.installArguments(), {
        result: { reference: true },
      });
      return parts;
    } catch (error) {
      isolate.dispose();
      throw error;
    }
  }

  /**
   * Made ahead of need: only the isolate is made on this thread; its context and the bootstrap's
   * install (most of the cost) run on isolated-vm's own threads, while this one serves.
   */
  static async prepare(shape: ContextShape): Promise<ContextParts> {
    const isolate = isolateOf(shape);
    try {
      const parts = new ContextParts(shape, isolate, await isolate.createContext());
      parts.installed = await parts.context.evalClosure(INSTALL, parts.installArguments(), {
        result: { reference: true },
      });
      return parts;
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }

  /**
   * Runs what every call runs but needs no host (bootstrap.js `warm`) `calls` times, on isolated-vm's
   * own threads: V8 optimizes it there, not on the thread the sandbox's calls will run on.
   */
  async warm(calls: number): Promise<void> {
    await this.entry.apply(undefined, [EntryKind.Warm, 0, calls]);
  }

  dispose(): void {
    if (!this.isolate.isDisposed) this.isolate.dispose();
  }

  private installArguments(): unknown[] {
    const host = new ivm.Callback((op: BridgeOpCode, callId: number, a: unknown, b: unknown) =>
      this.host(op, callId, a, b),
    );
    return [host, codesCopy.copyInto(), this.shape.valueMaxBytes, this.shape.lockdown];
  }
}

const isolateOf = (shape: ContextShape): ivm.Isolate =>
  new ivm.Isolate({ memoryLimit: shape.memoryMb, snapshot: shape.snapshot });

const INSTALL = 'return __anvilInstall($0, $1, $2, $3)';

/**
 * One isolate with one long-lived context: the sandbox of an API release on one actor thread. The
 * directives' modules are evaluated in it once, on first use; each call is one synchronous call of
 * the bootstrap's `entry` on this thread. Nothing is ever run in it asynchronously, so no
 * isolated-vm thread hand-off is paid.
 */
export class SandboxContext {
  readonly isolate: ivm.Isolate;
  private readonly context: ivm.Context;
  private readonly entry: ivm.Reference<(...args: unknown[]) => unknown>;
  /** Directive name → null once its module is defined, or why it could not be. */
  private readonly modules = new Map<string, string | null>();
  /** Kept in JS: isolated-vm's `isDisposed` is a native call, and this is read several times a call. */
  private gone = false;
  /** The isolate's CPU time when last read (see `cpuSinceLastRead`). */
  private lastCpu = 0n;
  private readonly enter: () => void;

  /**
   * A context made now, or `parts` made earlier (a spare: sandbox-spares.ts), which this sandbox
   * alone holds from now on. No `onCatastrophicError`: isolated-vm would call it on this thread's
   * event loop and put the failing thread to sleep, and the failing thread is this one (calls are
   * synchronous), so the cell would hang with it. Without a handler, an allocation V8 cannot
   * survive aborts the cell, which the router contains; a script that cannot be stopped keeps the
   * thread, which the router's stuck-thread watchdog ends.
   */
  constructor(options: ContextOptions, parts?: ContextParts) {
    this.enter = options.enter;
    this.enter();
    const made = parts ?? ContextParts.make(options);
    if (made.taken) throw new Error('a sandbox context can be taken once');
    made.taken = true;
    made.host = options.host;
    this.isolate = made.isolate;
    this.context = made.context;
    this.entry = made.entry;
    // What making it cost is not the API's: its CPU is counted from here.
    this.lastCpu = this.isolate.cpuTime;
  }

  get disposed(): boolean {
    return this.gone;
  }

  /** After a call into the isolate threw: isolated-vm disposes an isolate that hit its memory limit. */
  disposedAfterFailure(): boolean {
    if (!this.gone && this.isolate.isDisposed) this.gone = true;
    return this.gone;
  }

  /**
   * CPU time the isolate used since the last read: only calls of ours run code in it, one at a time,
   * so read right after a call this is that call's (one native read per call instead of two).
   */
  cpuSinceLastRead(): bigint {
    if (this.gone) return 0n;
    const now = this.isolate.cpuTime;
    const used = now - this.lastCpu;
    this.lastCpu = now;
    return used;
  }

  /** CPU time the isolate used since the last read, without moving the read mark (a look mid-stretch). */
  cpuUnread(): bigint {
    return this.gone ? 0n : this.isolate.cpuTime - this.lastCpu;
  }

  /**
   * Evaluates a directive's module the first time it is called here. Returns null when it is ready,
   * or the message of the error its top-level code threw (a breach, such as a timeout, throws).
   */
  load(name: string, code: string, timeout: number): string | null {
    const known = this.modules.get(name);
    if (known !== undefined) return known;
    // The module's own `var __anvilDirective` stays inside the function: no global is left behind.
    // The function starts on the first line, so positions in stack traces stay those of the file.
    const script = this.isolate.compileScriptSync(
      `(function () {${code}\n;return typeof ${DIRECTIVE_GLOBAL} === 'undefined' ? undefined : ${DIRECTIVE_GLOBAL};\n})()`,
      {
        filename: `file:///Directives/${name}.js`,
      },
    );
    let exported: ivm.Reference<unknown>;
    this.enter();
    try {
      exported = script.runSync(this.context, { reference: true, timeout });
    } catch (error) {
      if (this.disposedAfterFailure() || isTimeout(error)) throw error;
      const message = `${name}: its module threw while loading: ${error instanceof Error ? error.message : String(error)}`;
      this.modules.set(name, message);
      return message;
    } finally {
      script.release();
    }
    this.enter();
    try {
      this.entry.applySync(undefined, [EntryKind.Define, 0, name, exported.derefInto()], { timeout });
    } finally {
      exported.release();
    }
    this.modules.set(name, null);
    return null;
  }

  /**
   * Starts a call: every argument is a primitive (the config as JSON text), and so is the result
   * (undefined, 1 for "it awaits", or "<status> <message>"), so nothing is copied either way.
   */
  call(callId: number, name: string, configJson: string, requestId: string, timeout: number): unknown {
    this.enter();
    return this.entry.applySync(undefined, [EntryKind.Call, callId, name, configJson, requestId], { timeout });
  }

  /** Continues a call that awaits a `state.run`, with its reply (copied in). */
  settle(callId: number, ticket: number, reply: unknown, timeout: number): void {
    this.enter();
    this.entry.applySync(undefined, [EntryKind.Settle, callId, ticket, reply], { arguments: { copy: true }, timeout });
  }

  /** Drops what a call still awaits: its continuation will never run. */
  forget(callId: number): void {
    this.enter();
    this.entry.applySync(undefined, [EntryKind.Forget, callId], { timeout: 1_000 });
  }

  /** Heap in use, including memory V8 counts outside the heap (array buffers). */
  heapBytes(): number {
    if (this.disposed) return 0;
    const heap = this.isolate.getHeapStatisticsSync();
    return heap.used_heap_size + heap.externally_allocated_size;
  }

  dispose(): void {
    if (this.gone) return;
    this.gone = true;
    if (!this.isolate.isDisposed) this.isolate.dispose();
  }
}

export function isTimeout(error: unknown): boolean {
  return error instanceof Error && /timed out/i.test(error.message);
}
