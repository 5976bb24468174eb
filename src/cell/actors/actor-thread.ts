/**
 * Entry of an actor thread (a worker thread inside a cell). It starts as the cell's spare: its
 * modules load while no request waits for it, then the cell hands it actors (`assign` messages).
 * A dedicated thread serves one actor and exits once that actor has retired; a shared thread
 * serves many quiet actors at once, each in its own isolate, all over one connection to the router
 * (a channel each: router-line.ts), and lives on after they leave (thread-actor.ts). RETIRE (or the router going away) makes
 * an actor finish what it has in flight, AFTER_FLOW included.
 */
import type { Socket } from 'node:net';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { builtinDirectives } from '../../directives/catalogue.js';
import { prepareParamChecks } from '../../engine/param-check.js';
import type { CellToThread, SpareData, ThreadData, ThreadToCell } from '../../shared/protocol/cell-messages.js';
import type { Tracer } from '../../shared/tracing/trace-span.js';
import { keepSpareContexts } from '../sandbox-host/sandbox.js';
import { tracingConfig } from '../../shared/tracing/tracing-config.js';
import { CpuShares } from './cpu-shares.js';
import { DEFAULT_SANDBOX_LIMITS } from './sandbox-setup.js';
import { SharedConnection, SocketLine, type RouterLine } from './router-line.js';
import { dial, ThreadActor } from './thread-actor.js';

// Work every API's thread needs, done while this thread is still the cell's spare: the checks of
// every built-in, and the connection to the router (its hello names no API yet).
prepareParamChecks(builtinDirectives);
const tracing = tracingConfig();
// Only when tracing is on is OpenTelemetry loaded at all, while this thread is still a spare.
const tracerModule = tracing.enabled ? import('../../shared/tracing/otel-tracer.js') : null;
// A failure is reported once the thread has its API (below); until then it must not count as unhandled.
tracerModule?.catch(() => {});
const spare = workerData as SpareData;
/** Taken by the thread's first actor (a dedicated thread's socket, or a shared thread's connection). */
let spareSocket: Socket | null = dial(spare);
/** A shared thread's one connection to the router, a channel per actor. */
let connection: SharedConnection | null = null;
/** Everything this thread tells its cell. */
const toCell = (message: ThreadToCell): void => {
  parentPort?.postMessage(message);
};
toCell({ type: 'spare-ready' });

let tracer: Tracer | null = null;
let tracerOpened = false;
/** Set by the first assign: whether this thread serves one actor or many. */
let cpu: CpuShares | null = null;
let shared = false;
let actors = 0;
let nextPeer = 0;

async function openTracer(): Promise<void> {
  if (tracerOpened || tracerModule === null) return;
  tracerOpened = true;
  try {
    tracer = (await tracerModule).openTracer(tracing, { 'anvil.cell': spare.cell });
  } catch (error) {
    toCell({
      type: 'log',
      level: 'error',
      msg: `tracing is off in this thread: OpenTelemetry could not be loaded (${String(error)})`,
    });
  }
}

/** The spare's connection when it still holds, else a new one (it broke meanwhile, or was taken). */
function takeSocket(data: ThreadData): Socket {
  const socket = spareSocket !== null && !spareSocket.destroyed ? spareSocket : dial(data);
  spareSocket = null;
  return socket;
}

function lineFor(data: ThreadData): RouterLine {
  if (!shared) return new SocketLine(takeSocket(data));
  if (connection === null || !connection.open) connection = new SharedConnection(takeSocket(data));
  return connection.line();
}

/** What this thread is, once: a shared thread (many actors) or a dedicated one. */
function become(asShared: boolean): CpuShares {
  if (cpu !== null) return cpu;
  shared = asShared;
  cpu = new CpuShares(shared);
  // A shared thread made before any API makes its snapshot and first spare context now, off every request.
  if (shared) keepSpareContexts(DEFAULT_SANDBOX_LIMITS.memoryMb);
  return cpu;
}

async function assign(data: ThreadData): Promise<void> {
  const shares = become(data.shared);
  await openTracer();
  const actorName = { actor: data.spec.id, thread: data.thread };
  let actor: ThreadActor;
  try {
    actor = new ThreadActor(
      data,
      { shared, toCell, cpu: shares, peerSuffix: `${process.pid}.${threadId}.${nextPeer++}`, tracer },
      lineFor(data),
    );
    actors++;
    await actor.start();
  } catch (error) {
    toCell({ type: 'actor-failed', ...actorName, error: error instanceof Error ? error.message : String(error) });
    if (!shared) process.exit(1);
    return;
  }
  // From here on a crash is a thread dying, not an actor failing to start (see cell-main).
  toCell({ type: 'started', ...actorName });
  await actor.finished;
  actors--;
  toCell({ type: 'actor-exit', ...actorName });
  if (!shared && actors === 0) await exit();
}

async function exit(): Promise<void> {
  cpu?.close();
  if (tracer !== null)
    await Promise.race([tracer.close(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
  process.exit(0);
}

parentPort!.on('message', (message: CellToThread) => {
  if (message.type === 'assign') void assign(message.data);
  else if (message.type === 'share') become(true);
});
