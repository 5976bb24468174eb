/**
 * Router ↔ deploy worker (deploy/releases/deploy-worker.ts and its process, deploy-worker-process.ts): the
 * messages of the worker's IPC channel, one deploy at a time.
 */
import type { StageResult, StageTask } from './stage-release.js';

/** From the router to the worker. */
export type ToDeployWorker =
  /** Stage one deploy; the worker answers with `result` or `failure`. */
  | { kind: 'stage'; task: StageTask }
  /** Stop esbuild's service and exit. */
  | { kind: 'quit' };

/** From the worker to the router. */
export type FromDeployWorker =
  /** Its modules are loaded and warm: it can take a deploy. */
  | { kind: 'ready' }
  | { kind: 'result'; result: StageResult }
  /** Staging threw (a bug, not a refusal: refusals are results). */
  | { kind: 'failure'; message: string };
