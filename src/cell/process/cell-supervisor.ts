import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ActorSpec, CellProcessStats, CellToRouter, RouterToCell } from '../../shared/protocol/cell-messages.js';
import { cellPreloadEnv, type CellAllocator } from './cell-allocator.js';
import { lowPriorityCpus } from './low-priority-cpus.js';
import { markerFile } from './sandbox-markers.js';

export interface CellEvents {
  ready(cell: number): void;
  /**
   * The cell process died (crash, SIGKILL, …); it is being restarted. `running`: the actors whose
   * threads were running tenant code (a sandbox stretch) when it died, from its marker file.
   */
  down(cell: number, reason: string, running: string[]): void;
  threadFailed(cell: number, actor: string, thread: number, error: string): void;
  threadExit(cell: number, actor: string, thread: number, code: number): void;
  log(cell: number, level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void;
  /** The cell process's own figures (CPU, memory, event-loop lag), every few seconds. */
  processStats?(cell: number, stats: CellProcessStats): void;
}

export interface CellOptions {
  count: number;
  /** Loaded threads each cell keeps for the next API that needs one (cell-main.ts). */
  spareThreads: number;
  sharedThreads: number;
  socketPath: string;
  token: string;
  /** More Node flags for every cell process (diagnostics such as --cpu-prof or --trace-gc). */
  nodeFlags: readonly string[];
  /** The memory allocator every cell preloads (cell-allocator.ts); absent: the system's. */
  allocator?: CellAllocator;
}

interface Cell {
  index: number;
  /** Its CPU priority (nice): CELL_NICE; the low-priority cell of CPU-heavy APIs runs at 19. */
  nice: number;
  child: ChildProcess | null;
  ready: boolean;
  /** Stopped for good (a quarantine cell no API needs): not restarted; its index may be reused. */
  retired: boolean;
  restarts: number;
  lastStart: number;
  /** Its shared threads start with it (the cells of quiet APIs), not with its first API. */
  sharesAtBoot: boolean;
}

const entry = fileURLToPath(new URL('./cell-main.js', import.meta.url));
/**
 * The priority of every cell but the low-priority one: a little below the router's (weight 335
 * against 1024). Every request passes through the router's one thread, so when the cores are
 * contended the router goes first and keeps the cells' threads fed; an API's threads cannot starve
 * the front door that all APIs share. Measured here, /ping saturated: +8 % req/s against nice 0
 * (nice 3: +4 %, nice 10: the same as 5).
 */
export const CELL_NICE = 5;
/** A cell that dies within this long of starting counts as crash-looping: its restart is delayed. */
const QUICK_DEATH_MS = 5_000;
const MAX_RESTART_DELAY_MS = 5_000;
/** A retired cell that has not exited this long after being told to drain is killed. */
const RETIRE_GRACE_MS = 5_000;

/**
 * Starts the cell processes, restarts any that dies, and carries the router's lifecycle messages to
 * them. It knows nothing of requests: the actor directory holds and fails those.
 */
export class CellSupervisor {
  private readonly cells: Cell[];
  /** Where the cells' marker files live (sandbox-markers.ts). */
  private readonly markerDir: string;
  private stopping = false;
  private firstStart: { waiting: Set<number>; resolve: () => void } | null = null;

  constructor(
    private readonly options: CellOptions,
    private readonly events: CellEvents,
  ) {
    // The cells of quiet APIs start with their shared threads; a quarantine or low-priority cell gets them when used.
    this.cells = Array.from({ length: options.count }, (_, index) =>
      newCell(index, CELL_NICE, options.sharedThreads > 0),
    );
    this.markerDir = mkdtempSync(join(tmpdir(), 'anvil-cells-'));
  }

  /** Cell processes running or starting (retired cells not counted). */
  get count(): number {
    return this.cells.filter((c) => !c.retired).length;
  }

  /** Starts every cell; resolves once all have said they are ready. */
  start(): Promise<void> {
    const allReady = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('cells did not start within 30 s')), 30_000);
      this.firstStart = {
        waiting: new Set(this.cells.map((c) => c.index)),
        resolve: () => (clearTimeout(timer), resolve()),
      };
    });
    for (const cell of this.cells) this.startCell(cell);
    return allReady;
  }

  isReady(cell: number): boolean {
    return this.cells[cell]?.ready === true;
  }

  pid(cell: number): number | undefined {
    return this.cells[cell]?.child?.pid;
  }

  spawnThread(cell: number, actor: ActorSpec, thread: number, shared: boolean): boolean {
    return this.send(cell, { type: 'spawn-thread', actor, thread, shared });
  }

  terminateThread(cell: number, actor: string, thread: number): boolean {
    return this.send(cell, { type: 'terminate-thread', actor, thread });
  }

  /**
   * Starts one more cell (a quarantine cell, or with a `nice` above CELL_NICE the low-priority cell)
   * and returns its index; it is restarted like the others.
   */
  addCell(nice = CELL_NICE): number {
    const reusable = this.cells.find((c) => c.retired && c.child === null);
    const cell = newCell(reusable?.index ?? this.cells.length, nice);
    this.cells[cell.index] = cell;
    this.startCell(cell);
    return cell.index;
  }

  /** Stops a cell for good once its threads are gone (killed after RETIRE_GRACE_MS); its index may be reused. */
  retireCell(index: number): void {
    const cell = this.cells[index];
    if (cell === undefined || cell.retired) return;
    cell.retired = true;
    cell.ready = false;
    const child = cell.child;
    if (child === null) return;
    if (child.connected) child.send({ type: 'drain' } satisfies RouterToCell);
    setTimeout(() => child.kill('SIGKILL'), RETIRE_GRACE_MS).unref();
  }

  /** Kills a cell outright (a thread in it would not stop); it is restarted like after any death. */
  kill(cell: number): void {
    this.cells[cell]?.child?.kill('SIGKILL');
  }

  /**
   * Asks every cell to exit once its threads are gone; kills what is left after `timeoutMs`. A cell
   * still starting has no thread yet and is killed at once. No cell is restarted from here on.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.stopping = true;
    const exits = this.cells.map((cell) => {
      const child = cell.child;
      if (child === null || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), cell.ready ? timeoutMs : 0);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        if (cell.ready) this.send(cell.index, { type: 'drain' });
      });
    });
    await Promise.all(exits);
    rmSync(this.markerDir, { recursive: true, force: true });
  }

  private markerPath(cell: Cell): string {
    return join(this.markerDir, `cell-${cell.index}.markers`);
  }

  private send(cell: number, message: RouterToCell): boolean {
    const target = this.cells[cell];
    if (target === undefined || !target.ready || target.child === null || !target.child.connected) return false;
    target.child.send(message);
    return true;
  }

  private startCell(cell: Cell): void {
    cell.lastStart = Date.now();
    cell.ready = false;
    const markers = this.markerPath(cell);
    markerFile.reset(markers);
    const child = fork(
      entry,
      [
        '--cell',
        String(cell.index),
        '--nice',
        String(cell.nice),
        '--spares',
        String(this.options.spareThreads),
        '--shared-threads',
        String(Math.max(1, this.options.sharedThreads)),
        '--shared-at-boot',
        cell.sharesAtBoot ? '1' : '0',
      ],
      {
        ...launcher(cell.nice > CELL_NICE, this.options.nodeFlags),
        // An abstract socket name starts with a NUL byte, which the environment cannot carry: send it as '@'.
        env: {
          ...process.env,
          ANVIL_ROUTER_SOCKET: this.options.socketPath.replace(/^\0/, '@'),
          ANVIL_CELL_TOKEN: this.options.token,
          ANVIL_CELL_MARKERS: markers,
          ...cellPreloadEnv(this.options.allocator, process.env.LD_PRELOAD),
        },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        serialization: 'json',
      },
    );
    cell.child = child;
    child.on('message', (message: CellToRouter) => this.onMessage(cell, message));
    child.on('error', (error) => this.events.log(cell.index, 'error', 'cell process error', { error: error.message }));
    child.on('exit', (code, signal) => {
      if (cell.child !== child) return;
      cell.child = null;
      cell.ready = false;
      if (this.stopping || cell.retired) return;
      const reason = signal !== null ? `signal ${signal}` : `exit code ${code}`;
      this.events.down(cell.index, reason, markerFile.flagged(markers));
      const quick = Date.now() - cell.lastStart < QUICK_DEATH_MS;
      cell.restarts = quick ? cell.restarts + 1 : 0;
      const delay = quick ? Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** (cell.restarts - 1)) : 0;
      setTimeout(() => {
        if (!this.stopping && !cell.retired) this.startCell(cell);
      }, delay).unref();
    });
  }

  private onMessage(cell: Cell, message: CellToRouter): void {
    switch (message.type) {
      case 'ready':
        cell.ready = true;
        this.events.ready(cell.index);
        if (this.firstStart !== null) {
          this.firstStart.waiting.delete(cell.index);
          if (this.firstStart.waiting.size === 0) {
            this.firstStart.resolve();
            this.firstStart = null;
          }
        }
        break;
      case 'thread-failed':
        this.events.threadFailed(cell.index, message.actor, message.thread, message.error);
        break;
      case 'thread-exit':
        this.events.threadExit(cell.index, message.actor, message.thread, message.code);
        break;
      case 'log':
        this.events.log(cell.index, message.level, message.msg, message.fields);
        break;
      case 'process':
        this.events.processStats?.(cell.index, message.stats);
        break;
    }
  }
}

function newCell(index: number, nice: number, sharesAtBoot = false): Cell {
  return { index, nice, child: null, ready: false, retired: false, restarts: 0, lastStart: 0, sharesAtBoot };
}

/**
 * Node flags every cell starts with (ANVIL_CELL_NODE_FLAGS come after them, so they can override):
 * - `--no-node-snapshot`: isolated-vm needs it on Node 20.
 * - `--no-concurrent-recompilation`: V8 then optimizes a hot function on the thread that runs it
 *   instead of on a background thread. With background compiles, a custom directive's functions
 *   often never got optimized at all: the sandbox is only entered synchronously, and a compile that
 *   finished while the isolate was not running was never installed (by the look of it, V8's request
 *   to install it is lost when isolated-vm enters the isolate again). The function then stays in
 *   V8's baseline tier for the life of the isolate, "optimizing" forever: measured here in 2 of 3
 *   fresh isolates for a small loop, in 2 of 4 for a function that builds 30 small objects (a call
 *   4.4–4.6 µs against 2.5–2.9 µs optimized); in a saturated cell every function of the bootstrap
 *   and of the directive was in that tier (bench/notes/custom-directive-profile.md). The cost: a hot
 *   function of the cell's own code (or a directive's, counted in its CPU time) is compiled once in
 *   the request that made it hot, instead of beside it.
 */
export const CELL_V8_FLAGS: readonly string[] = ['--no-concurrent-recompilation'];
export const CELL_NODE_FLAGS: readonly string[] = ['--no-node-snapshot', ...CELL_V8_FLAGS];

const TASKSET =
  process.platform === 'linux' ? (['/usr/bin/taskset', '/bin/taskset'].find((path) => existsSync(path)) ?? null) : null;

/**
 * How a cell process is started. The low-priority cell is confined to its own CPUs with Linux's
 * `taskset` where it is there (see low-priority-cpus.ts); it lowers its own priority (cell-main).
 * Not SCHED_IDLE: Linux counts a CPU running only SCHED_IDLE work as idle when it places a woken
 * thread, which sends light APIs' threads onto the hog's CPU anyway (measured here with the hog
 * confined: a light API's p99 under the hog 1.8-3.8 ms with SCHED_IDLE, 0.6-1.1 ms at nice 19).
 */
function launcher(lowPriority: boolean, nodeFlags: readonly string[]): { execPath?: string; execArgv: string[] } {
  const execArgv = [...CELL_NODE_FLAGS, ...nodeFlags];
  const cpus = lowPriority && TASKSET !== null ? lowPriorityCpus() : null;
  if (cpus === null) return { execArgv };
  return { execPath: TASKSET!, execArgv: ['-c', cpus, process.execPath, ...execArgv] };
}
