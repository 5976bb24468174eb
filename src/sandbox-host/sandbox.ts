/**
 * Runs custom directives (SPEC §7) in isolated-vm. Every call gets a fresh context in an isolate
 * of its own for the duration of the call, so nothing a call leaves behind (globals, module state,
 * patched prototypes) is seen by any other call. Limits per call: CPU time, measured on the
 * isolate and enforced by a watchdog also while the directive awaits; wall time; and the
 * isolate's memory. A breach disposes that isolate only and fails that request only.
 *
 * isolated-vm's `cpuTime` is the time the isolate spent running, which includes time its thread was
 * preempted by the OS: on a loaded machine the CPU limit is stricter than the CPU really used.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import ivm from 'isolated-vm';
import type { SandboxLimits } from '../config/types.js';
import type { DirectiveContext } from '../engine/context.js';
import type { DirectiveDefinition } from '../directives/types.js';
import { AnvilError } from '../errors.js';
import { CpuGate } from './cpu-gate.js';
import { HostBridge, type BridgeServices, type CallOutcome } from './host-bridge.js';
import { IsolatePool, type IsolateSlot } from './isolate-pool.js';

const bootstrapSource = readFileSync(new URL('../../sandbox/bootstrap.js', import.meta.url), 'utf8');
const WATCH_EVERY_MS = 5;


export interface SandboxOptions {
  limits: SandboxLimits;
  isolates: number;
  directiveCode: Readonly<Record<string, string>>;
  services: BridgeServices;
  /** A breach or a failure of the sandbox itself, for the instance log. */
  report(event: { directive: string; kind: 'cpu' | 'wall' | 'memory' | 'crash'; message: string }): void;
}

export class Sandbox {
  private readonly pool: IsolatePool;
  private readonly gate = new CpuGate();
  private cpuMs = 0;

  constructor(private readonly options: SandboxOptions) {
    this.pool = new IsolatePool({
      memoryMb: options.limits.memoryMb,
      size: options.isolates,
      bootstrapSource,
      onCatastrophicError: (message) => {
        // V8 lost control of an isolate: nothing in this process can be trusted any more. The cell
        // dies; the router fails its in-flight requests and restarts it.
        options.report({ directive: '(isolate)', kind: 'crash', message });
        process.abort();
      },
    });
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

  get isolates(): number {
    return this.pool.isolates;
  }

  /** CPU time the isolates used since the last call (a task cut by a limit counts its wall time). */
  takeCpuMs(): number {
    const ms = this.cpuMs;
    this.cpuMs = 0;
    return ms;
  }

  heapBytes(): Promise<number> {
    return this.pool.heapBytes();
  }

  close(): void {
    this.pool.close();
  }

  async call(name: string, ctx: DirectiveContext, config: Record<string, unknown>): Promise<void> {
    const code = this.options.directiveCode[name];
    if (code === undefined) throw new AnvilError('ANVIL_ERR_SANDBOX', 500, `unknown custom directive ${name}`);
    const slot = await this.pool.acquire();
    const bridge = new HostBridge(ctx, name, this.options.services);
    let broken = true;
    try {
      const outcome = await this.runIn(slot, bridge, name, code, ctx, config);
      // Work the directive started and did not await (a pending state.run) would go on in this
      // isolate during a later call: such an isolate is not reused.
      broken = bridge.pending > 0;
      if ('failed' in outcome) {
        const status = Number.isInteger(outcome.failed.status) && outcome.failed.status >= 400 && outcome.failed.status <= 599 ? outcome.failed.status : 500;
        throw new AnvilError('ANVIL_ERR_DIRECTIVE_FAILED', status, outcome.failed.message);
      }
    } finally {
      bridge.close();
      this.pool.release(slot, broken);
    }
  }

  private async runIn(slot: IsolateSlot, bridge: HostBridge, name: string, code: string, ctx: DirectiveContext, config: Record<string, unknown>): Promise<CallOutcome> {
    const { limits } = this.options;
    const { isolate } = slot;
    // Every stretch of the directive runs through the gate; its CPU time is counted for the thread's report.
    const gate = {
      run: <T>(task: () => Promise<T>): Promise<T> =>
        this.gate.run(async () => {
          const cpuBefore = isolate.cpuTime;
          const wallBefore = performance.now();
          try {
            return await task();
          } finally {
            this.cpuMs += isolate.isDisposed ? performance.now() - wallBefore : Number(isolate.cpuTime - cpuBefore) / 1e6;
          }
        }),
    };
    // Counted from the directive's own code on: making the context and the facade is ours.
    let startCpu = isolate.cpuTime;
    const startWall = Date.now();
    let breach: 'cpu' | 'wall' | null = null;
    const watchdog = setInterval(() => {
      if (isolate.isDisposed) return;
      if (Number(isolate.cpuTime - startCpu) / 1e6 > limits.cpuMs) breach = 'cpu';
      else if (Date.now() - startWall > limits.wallMs) breach = 'wall';
      if (breach !== null) {
        isolate.dispose();
        bridge.abort(new Error('limit breached'));
      }
    }, WATCH_EVERY_MS);
    const wallLeft = () => Math.max(1, limits.wallMs - (Date.now() - startWall));
    let context: ivm.Context | null = null;
    try {
      // Making the context and installing the facade are ours and short: they run synchronously on
      // this thread (an async isolated-vm call costs a thread hand-off each way, ~100 µs, and the
      // gate lets no other call's task in meanwhile). The directive's own code runs async below.
      const settle = `__anvilSettle${randomBytes(6).toString('hex')}`;
      const madeAhead = await this.pool.takeContext(slot);
      const ready = await gate.run(async () => {
        // The context starts from the pool's snapshot: the bootstrap is already in it.
        const made = madeAhead ?? isolate.createContextSync();
        made.evalClosureSync(
          '__anvilInstall($0, $1, $2, $3)',
          [new ivm.Callback(bridge.sync), new ivm.Callback(bridge.start), new ivm.ExternalCopy({ id: ctx.id, name, settle }).copyInto(), new ivm.ExternalCopy(config).copyInto()],
          { timeout: wallLeft() },
        );
        return made;
      });
      context = ready;
      // The directive's own code runs async, on isolated-vm's thread: a fatal error there (an
      // allocation V8 cannot survive) aborts the cell, which the router contains, where on this
      // thread it would leave the thread hanging.
      bridge.settle = (ticket, reply) => {
        if (isolate.isDisposed) return;
        // The directive's continuation after an await runs in this task.
        gate
          .run(() => ready.evalClosure(`${settle}($0, $1)`, [ticket, new ivm.ExternalCopy(reply).copyInto()], { timeout: wallLeft() }))
          .catch((error: unknown) => bridge.abort(error));
      };
      // The script ends by starting the directive: one hand-off to isolated-vm's thread, not two.
      const script = await this.pool.script(slot, name, `${code}\n;__anvilRun();\n`);
      await gate.run(async () => {
        startCpu = isolate.cpuTime;
        await script.run(ready, { timeout: wallLeft() });
      });
      return await bridge.outcome;
    } catch (error) {
      throw this.explain(name, error, breach, isolate.isDisposed);
    } finally {
      clearInterval(watchdog);
      if (context !== null && !isolate.isDisposed) context.release();
    }
  }

  /** Turns what isolated-vm threw into the request's error, and logs breaches. */
  private explain(name: string, error: unknown, breach: 'cpu' | 'wall' | null, disposed: boolean): AnvilError {
    const { limits } = this.options;
    const text = error instanceof Error ? error.message : String(error);
    let kind: 'cpu' | 'wall' | 'memory' | null = breach;
    if (kind === null && /timed out/i.test(text)) kind = 'wall';
    if (kind === null && disposed) kind = 'memory';
    if (kind === null) return new AnvilError('ANVIL_ERR_DIRECTIVE_FAILED', 500, `${name}: ${text}`);
    const message =
      kind === 'cpu'
        ? `${name} used more than its ${limits.cpuMs} ms of CPU time`
        : kind === 'wall'
          ? `${name} ran longer than its ${limits.wallMs} ms`
          : `${name} used more than its ${limits.memoryMb} MiB of memory`;
    this.options.report({ directive: name, kind, message });
    return new AnvilError(`ANVIL_ERR_SANDBOX_${kind.toUpperCase()}`, kind === 'wall' ? 504 : 500, message);
  }
}
