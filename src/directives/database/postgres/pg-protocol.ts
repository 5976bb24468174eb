/** The messages between an actor thread (pg-bridge.ts) and its PostgreSQL helper thread (pg-worker.ts). */
import type { MessagePort } from 'node:worker_threads';
import type { PgFailure } from './pg-failure.js';
import type { ApiIdentity } from './pg-settings.js';

export type StatementMode = 'all' | 'get' | 'run';

export interface PgWorkerInit {
  adminUrl: string;
  api: ApiIdentity;
  releaseDir: string;
  port: MessagePort;
  /** One Int32: set to 1 (and notified) once the reply to a `sync` request is on the port. */
  signal: SharedArrayBuffer;
}

export type PgRequest =
  | { op: 'ready' }
  | { op: 'query'; text: string; values: unknown[]; mode: StatementMode; tx: number | null }
  | { op: 'begin' }
  | { op: 'end'; tx: number; action: 'commit' | 'rollback' };

export type PgEnvelope = PgRequest & { id: number; sync: boolean };
export type PgReply = { id: number; ok: unknown } | { id: number; error: PgFailure };
