/**
 * The actor thread's end of its PostgreSQL helper thread (pg-worker.ts): requests go over a
 * MessagePort; `call` awaits the reply, `callSync` blocks the thread until it comes (Atomics.wait
 * on a shared signal, then receiveMessageOnPort), for a custom directive's synchronous `state.db`.
 * Blocking is bounded: the role's statement_timeout ends a statement, and the wait gives up after
 * SYNC_WAIT_MS.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { Errors } from '../../../shared/errors.js';
import { fromPgFailure } from './pg-failure.js';
import type { PgEnvelope, PgReply, PgRequest, PgWorkerInit } from './pg-protocol.js';
import { PG_API_SETTINGS, type ApiIdentity } from './pg-settings.js';

const entry = new URL('./pg-worker.js', import.meta.url);
/** Longest synchronous wait: a first use (role, schema, migrations) plus a statement's timeout. */
const SYNC_WAIT_MS = PG_API_SETTINGS.statementTimeoutMs + 10_000;
/** The helper's heap: a huge result kills the helper (its requests fail), never the actor thread. */
const HELPER_HEAP_MB = 256;

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class PgBridge {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private gone: string | null = null;
  /** The API's schema, once the helper said it is ready. */
  schema: string | null = null;

  constructor(adminUrl: string, api: ApiIdentity, releaseDir: string) {
    const channel = new MessageChannel();
    this.port = channel.port1;
    const init: PgWorkerInit = {
      adminUrl,
      api,
      releaseDir,
      port: channel.port2,
      signal: this.signal.buffer as SharedArrayBuffer,
    };
    this.worker = new Worker(entry, {
      workerData: init,
      transferList: [channel.port2],
      env: {},
      resourceLimits: { maxOldGenerationSizeMb: HELPER_HEAP_MB },
    });
    this.worker.unref();
    this.port.on('message', (reply: PgReply) => this.settle(reply));
    this.port.unref();
    const fail = (why: string) => {
      this.gone ??= why;
      for (const pending of this.pending.values())
        pending.reject(Errors.sqlBusy(`the database helper stopped (${why}); retry`));
      this.pending.clear();
    };
    this.worker.on('error', (error) => fail(error.message));
    this.worker.on('exit', (code) => fail(`exit code ${code}`));
  }

  /** False once the helper stopped: the caller makes a new bridge. */
  get alive(): boolean {
    return this.gone === null;
  }

  call(request: PgRequest): Promise<unknown> {
    if (this.gone !== null) return Promise.reject(Errors.sqlBusy(`the database helper stopped (${this.gone}); retry`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.port.postMessage({ ...request, id, sync: false } satisfies PgEnvelope);
    });
  }

  /** Blocks this thread until the reply comes (replies to `call`s read meanwhile are settled too). */
  callSync(request: PgRequest): unknown {
    if (this.gone !== null) throw Errors.sqlBusy(`the database helper stopped (${this.gone}); retry`);
    const id = this.nextId++;
    Atomics.store(this.signal, 0, 0);
    this.port.postMessage({ ...request, id, sync: true } satisfies PgEnvelope);
    const deadline = Date.now() + SYNC_WAIT_MS;
    for (;;) {
      for (
        let received = receiveMessageOnPort(this.port);
        received !== undefined;
        received = receiveMessageOnPort(this.port)
      ) {
        const reply = received.message as PgReply;
        if (reply.id === id) return unwrap(reply);
        this.settle(reply);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw Errors.sqlBusy(`no answer from the cluster's Postgres within ${SYNC_WAIT_MS} ms`);
      Atomics.wait(this.signal, 0, 0, left);
      Atomics.store(this.signal, 0, 0);
    }
  }

  close(): void {
    this.gone ??= 'closed';
    this.port.close();
    void this.worker.terminate();
  }

  private settle(reply: PgReply): void {
    const pending = this.pending.get(reply.id);
    if (pending === undefined) return;
    this.pending.delete(reply.id);
    try {
      pending.resolve(unwrap(reply));
    } catch (error) {
      pending.reject(error);
    }
  }
}

function unwrap(reply: PgReply): unknown {
  if ('error' in reply) throw fromPgFailure(reply.error);
  return reply.ok;
}
