/**
 * The deploy worker, on the router's side: a child process that does everything a deploy does with
 * the tenant's bytes (stage-release.ts), one deploy at a time, so that the router's event loop only
 * moves bytes and messages. Deploys wait their turn fairly between public hosts (fair-queue.ts): a
 * host that sends thirty big deploys at once delays another host's deploy by one of them, not by
 * thirty. Each deploy has a time budget; past it the process is killed and the
 * deploy refused. The process has its own heap limit: a deploy that needs more is refused, and the
 * router never notices. A new process is started for the next deploy after either, and after a
 * minute without deploys (what a big deploy left on its heap goes with it).
 *
 * A process rather than a worker thread: the worker compiles custom directives with esbuild, whose
 * service is a child process. Terminating a worker thread leaves that child a zombie of the router
 * forever (only the thread's event loop would have reaped it); a killed process's child is an
 * orphan the system reaps.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FromDeployWorker, ToDeployWorker } from './deploy-messages.js';
import { FairQueue } from './fair-queue.js';
import type { StageResult, StageTask } from './stage-release.js';
import type { Refusal } from './upload-limits.js';

export interface DeployWorkerOptions {
  /** Wall time a deploy may take in the worker (unpacking, validating, staging). */
  budgetMs: number;
  /** The worker's heap (V8 old generation), MiB. */
  memoryMb: number;
  /** Whether the instance has the cluster's Postgres (DATABASE_URL): APIs with `database: postgres` need it. */
  postgres: boolean;
}

// deploy-worker-process.ts bundled into one file by the build (scripts/bundle-deploy-worker.mjs): a third less CPU to start.
const entry = fileURLToPath(new URL('./deploy-worker-bundle.mjs', import.meta.url));
const IDLE_MS = 60_000;
/**
 * Below the cells (nice 5): when the cores are contended, the router and the APIs it serves go
 * before a deploy. The price: on a saturated host a deploy takes longer, up to its time budget.
 */
export const DEPLOY_WORKER_NICE = 10;
/** What the worker last wrote on stderr (V8 says there why it aborted). */
const STDERR_TAIL = 4096;

interface Waiting {
  task: StageTask;
  resolve(result: StageResult): void;
  reject(error: unknown): void;
}

interface Running {
  child: ChildProcess;
  ready: Promise<void>;
  stderr: string;
}

export class DeployWorker {
  private current: Running | null = null;
  private readonly waiting = new FairQueue<Waiting>();
  private busy = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: DeployWorkerOptions) {}

  /** Runs `task` in its host's turn (`task.host`). */
  run(task: Omit<StageTask, 'postgres'>): Promise<StageResult> {
    return new Promise<StageResult>((resolve, reject) => {
      this.waiting.push(task.host, { task: { ...task, postgres: this.options.postgres }, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    if (this.busy) return;
    const next = this.waiting.shift();
    if (next === undefined) return;
    this.busy = true;
    this.runNow(next.task)
      .then(next.resolve, next.reject)
      .finally(() => {
        this.busy = false;
        this.next();
      });
  }

  /** Stops the worker (a deploy in progress fails). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    await this.stop(this.current, 'quit');
  }

  private async runNow(task: StageTask): Promise<StageResult> {
    if (this.closed) throw new Error('the instance is stopping: no more deploys');
    clearTimeout(this.idleTimer);
    const running = (this.current ??= this.start());
    try {
      await running.ready;
      return await this.exchange(running, task);
    } finally {
      if (!this.closed) this.idleTimer = setTimeout(() => void this.stop(this.current, 'quit'), IDLE_MS).unref();
    }
  }

  private exchange(running: Running, task: StageTask): Promise<StageResult> {
    const { child } = running;
    const { budgetMs, memoryMb } = this.options;
    return new Promise<StageResult>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      const timer = setTimeout(() => {
        done();
        this.stop(running, 'kill').then(
          () => resolve(refusal(`validation took too long (${formatMs(budgetMs)})`)),
          reject,
        );
      }, budgetMs);
      const onMessage = (message: FromDeployWorker): void => {
        done();
        if (message.kind === 'result') resolve(message.result);
        else
          reject(
            new Error(
              `the deploy worker failed: ${message.kind === 'failure' ? message.message : 'unexpected message'}`,
            ),
          );
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        done();
        if (/heap out of memory|allocation failed/i.test(running.stderr))
          resolve(refusal(`validation needed more than ${memoryMb} MiB of memory`));
        else
          reject(
            new Error(
              `the deploy worker stopped during a deploy (${signal ?? `exit code ${code}`}): ${running.stderr.trim().slice(-500)}`,
            ),
          );
      };
      child.on('message', onMessage);
      child.on('exit', onExit);
      child.send({ kind: 'stage', task } satisfies ToDeployWorker);
    });
  }

  /** A new worker process; `ready` resolves once it can take its first deploy. */
  private start(): Running {
    const child = fork(entry, ['--nice', String(DEPLOY_WORKER_NICE)], {
      env: {},
      execArgv: [`--max-old-space-size=${this.options.memoryMb}`],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const running: Running = { child, ready: Promise.resolve(), stderr: '' };
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      running.stderr = (running.stderr + chunk).slice(-STDERR_TAIL);
    });
    // An 'error' nobody listens to would be thrown in the router (a failed kill, a closed channel).
    child.on('error', () => undefined);
    child.once('exit', () => {
      if (this.current === running) this.current = null;
    });
    running.ready = new Promise<void>((resolve, reject) => {
      const onReady = (message: FromDeployWorker): void => {
        if (message.kind !== 'ready') return;
        settle();
        resolve();
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        settle();
        reject(
          new Error(
            `the deploy worker stopped before it was ready (${signal ?? `exit code ${code}`}): ${running.stderr.trim().slice(-500)}`,
          ),
        );
      };
      const settle = (): void => {
        child.off('message', onReady);
        child.off('exit', onExit);
      };
      child.on('message', onReady);
      child.on('exit', onExit);
    });
    running.ready.catch(() => undefined); // a worker that dies idle is simply replaced
    return running;
  }

  /** Ends a worker process: `quit` lets it stop esbuild first (killed after 2 s), `kill` is at once. Resolves once it has exited. */
  private async stop(running: Running | null, how: 'quit' | 'kill'): Promise<void> {
    if (running === null) return;
    if (this.current === running) this.current = null;
    const { child } = running;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (how === 'quit' && child.connected) {
      child.send({ kind: 'quit' } satisfies ToDeployWorker);
      const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
      await exited;
      clearTimeout(timer);
      return;
    }
    child.kill('SIGKILL');
    await exited;
  }
}

function refusal(message: string): Refusal {
  return { ok: false, status: 400, errors: [message] };
}

/** `10000` → `10 s`, `200` → `200 ms`. */
function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
