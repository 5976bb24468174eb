/**
 * Entry of a cell process. It runs no request itself: it starts the actor threads the router asks
 * for (each connects straight to the router's socket), reports their exits, and exits when told to
 * drain once its threads are gone. A fatal error of tenant code kills this process, never the router.
 */
import { Worker } from 'node:worker_threads';
import type {
  CellToRouter,
  CellToThread,
  RouterToCell,
  SpareData,
  ThreadData,
  ThreadToCell,
} from '../../shared/protocol/cell-messages.js';
import { numberArg } from './process-args.js';
import { reportProcess } from './process-report.js';
import { MarkerSlots } from './sandbox-markers.js';
import { setThreadsNice } from './thread-priority.js';
import { threadEnvironment } from '../../shared/tracing/tracing-config.js';

const cell = numberArg('--cell', 0);
// Threads inherit the priority of the thread that starts them: set it before starting any, so the
// actor threads and the isolates' threads run at the cell's priority (below the router's; a
// low-priority cell's below everything else). V8's and libuv's threads, already running, are
// lowered too.
const nice = numberArg('--nice', 0);
if (nice > 0) setThreadsNice(nice);
const socketPath = (process.env.ANVIL_ROUTER_SOCKET ?? '').replace(/^@/, '\0');
const token = process.env.ANVIL_CELL_TOKEN ?? '';
delete process.env.ANVIL_CELL_TOKEN;
const markerPath = process.env.ANVIL_CELL_MARKERS;
/** Each thread's slot in the file the router reads after a death: who was running tenant code. */
const markers = markerPath === undefined ? null : new MarkerSlots(markerPath);

const threadEntry = new URL('../actors/actor-thread.js', import.meta.url);
/** Nothing of this process's environment, but the OTEL_* variables when tracing is on. */
const threadEnv = threadEnvironment();
const workers = new Set<Worker>();
/**
 * Threads whose modules are loaded and which serve no API yet: the next API that needs a thread
 * gets one, so a cold start skips starting a worker and loading the engine (~400 ms → a few ms).
 * Two by default (--spare-threads), because a spare takes a few hundred ms to load: two cold starts
 * in a row both find one ready. A taken spare is replaced a moment later, off the path of the
 * request that took it.
 */
const SPARES = numberArg('--spares', 2);
const SPARE_DELAY_MS = 100;
const spares: Worker[] = [];
/** Spares whose modules are loaded (they said `spare-ready`). */
const readySpares = new Set<Worker>();
/**
 * Threads a request waits for that are still loading (a spare taken before it was ready, or a new
 * worker when there was none). No spare loads meanwhile: on a busy machine two loads at once each
 * take twice as long, and the request would wait for both (measured in cluster mode, three
 * instances on two cores, a deploy every ~0.2 s: 1.5-2.5 s for the new release's first request).
 */
const awaited = new Set<Worker>();
/** Removes the listeners a spare had while it waited. */
const spareListeners = new Map<Worker, () => void>();
/**
 * Threads that serve many quiet actors at once (--shared-threads per cell): an actor the router
 * places on a shared thread goes to the one serving the fewest. They live on while empty (their
 * modules loaded, their code warm) until the cell drains.
 */
const SHARED_THREADS = Math.max(1, numberArg('--shared-threads', 1));
/**
 * Whether this cell's shared threads start with it (a cell of quiet APIs), each with its sandbox
 * snapshot and a spare context, rather than with its first API: what they cost is the cell's from
 * the start, and no API's first request waits for them (~10–20 ms for the snapshot and its check).
 */
const SHARED_AT_BOOT = numberArg('--shared-at-boot', 0) === 1;
/** A worker and the actors it serves (`<actor>#<thread>` → the actor's marker slot and whether it started). */
interface Hosting {
  worker: Worker;
  shared: boolean;
  /** A shared thread's marker slot, which its actors share (null: dedicated, or no marker file). */
  slot: number | null;
  actors: Map<string, { slot: number | null; started: boolean }>;
}
const sharedThreads: Hosting[] = [];
/** `<actor>#<thread>` → the thread serving it, for terminate-thread. */
const byName = new Map<string, Hosting>();
let draining = false;

function send(message: CellToRouter): void {
  if (process.connected) process.send!(message);
}

function newWorker(): Worker {
  const workerData: SpareData = { socketPath, token, cell };
  return new Worker(threadEntry, { env: { ...threadEnv }, stdout: false, stderr: false, workerData });
}

/**
 * Starts one spare when there are fewer than SPARES and no other thread is loading: spares load one
 * at a time, so a cold start that must take one still loading finds it as far along as it can be.
 */
function startSpares(): void {
  if (draining || spares.length >= SPARES || awaited.size > 0 || spares.some((s) => !readySpares.has(s))) return;
  const worker = newWorker();
  spares.push(worker);
  const onMessage = (message: ThreadToCell) => {
    if (message.type !== 'spare-ready') return;
    readySpares.add(worker);
    startSpares();
  };
  const onError = (error: Error) =>
    send({ type: 'log', level: 'error', msg: 'spare actor thread failed', fields: { error: error.message } });
  const onExit = () => {
    readySpares.delete(worker);
    const at = spares.indexOf(worker);
    if (at < 0) return;
    spares.splice(at, 1);
    setTimeout(startSpares, 1_000).unref();
  };
  worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  // Only our own listeners: removeAllListeners() would also drop the ones Node uses to deliver messages.
  spareListeners.set(worker, () => worker.off('message', onMessage).off('error', onError).off('exit', onExit));
}

/** A loaded spare, else the one loading, else a new worker. */
function takeWorker(): Worker {
  const ready = spares.find((s) => readySpares.has(s));
  const worker = ready ?? spares[0] ?? newWorker();
  if (ready === undefined) awaited.add(worker);
  const at = spares.indexOf(worker);
  if (at >= 0) spares.splice(at, 1);
  readySpares.delete(worker);
  spareListeners.get(worker)?.();
  spareListeners.delete(worker);
  setTimeout(startSpares, SPARE_DELAY_MS).unref();
  return worker;
}

function spawnThread(message: Extract<RouterToCell, { type: 'spawn-thread' }>): void {
  if (draining) return;
  const { actor, thread, shared } = message;
  const hosting = shared ? sharedThread() : host(takeWorker(), false);
  const name = nameOf(actor.id, thread);
  // A shared thread's actors share its slot; a dedicated thread's actor has one of its own.
  const slot = shared ? null : (markers?.take(actor.id) ?? null);
  const markerSlot = shared ? hosting.slot : slot;
  const marker = markers === null || markerSlot === null ? null : { fd: markers.fd, slot: markerSlot, shared };
  const data: ThreadData = { spec: actor, thread, socketPath, token, cell, shared, marker };
  hosting.actors.set(name, { slot, started: false });
  byName.set(name, hosting);
  hosting.worker.postMessage({ type: 'assign', data } satisfies CellToThread);
}

/** The shared thread serving the fewest actors (a new one while there are fewer than SHARED_THREADS). */
function sharedThread(): Hosting {
  if (sharedThreads.length < SHARED_THREADS) {
    const hosting = host(takeWorker(), true);
    sharedThreads.push(hosting);
    return hosting;
  }
  return sharedThreads.reduce((best, t) => (t.actors.size < best.actors.size ? t : best));
}

/** Follows a worker that serves actors: what it says of each, and its end. */
function host(worker: Worker, shared: boolean): Hosting {
  const hosting: Hosting = { worker, shared, slot: shared ? (markers?.take() ?? null) : null, actors: new Map() };
  workers.add(worker);
  const loaded = (): void => {
    if (awaited.delete(worker)) setTimeout(startSpares, SPARE_DELAY_MS).unref();
  };
  /** An actor is gone from the thread: its marker slot is free, and the router is told `message`. */
  const gone = (name: string, message: CellToRouter | null): void => {
    const served = hosting.actors.get(name);
    if (served === undefined) return;
    hosting.actors.delete(name);
    if (byName.get(name) === hosting) byName.delete(name);
    if (served.slot !== null) markers?.release(served.slot);
    if (message !== null) send(message);
    if (draining && hosting.actors.size === 0) void worker.terminate();
  };
  worker.on('message', (message: ThreadToCell) => {
    if (message.type === 'log') {
      send(message);
      return;
    }
    if (message.type === 'spare-ready') {
      // A shared thread started with the cell, taken while it loaded and serving nothing yet: the next spare may load.
      if (hosting.actors.size === 0) loaded();
      return;
    }
    const { actor, thread } = message;
    const name = nameOf(actor, thread);
    if (message.type === 'started') {
      const served = hosting.actors.get(name);
      if (served !== undefined) served.started = true;
      loaded();
    } else if (message.type === 'actor-failed') {
      loaded();
      gone(name, { type: 'thread-failed', actor, thread, error: message.error });
    } else gone(name, { type: 'thread-exit', actor, thread, code: 0 });
  });
  worker.on('error', (error) => {
    for (const [name, served] of hosting.actors) {
      const [actor, thread] = splitName(name);
      if (served.started)
        send({
          type: 'log',
          level: 'error',
          msg: 'actor thread crashed',
          fields: { actor, thread, shared, error: error.message },
        });
      else gone(name, { type: 'thread-failed', actor, thread, error: error.message });
    }
  });
  worker.on('exit', (code) => {
    loaded();
    workers.delete(worker);
    const at = sharedThreads.indexOf(hosting);
    if (at >= 0) sharedThreads.splice(at, 1);
    for (const name of [...hosting.actors.keys()]) {
      const [actor, thread] = splitName(name);
      gone(name, { type: 'thread-exit', actor, thread, code });
    }
    if (hosting.slot !== null) markers?.release(hosting.slot);
    if (draining && workers.size === 0) process.exit(0);
  });
  return hosting;
}

/** `<actor>#<thread>`: an actor on a thread, as the cell knows it. */
function nameOf(actor: string, thread: number): string {
  return `${actor}#${thread}`;
}

function splitName(name: string): [string, number] {
  const at = name.lastIndexOf('#');
  return [name.slice(0, at), Number(name.slice(at + 1))];
}

/** Stops the shared threads that serve no actor (the cell drains). */
function stopEmptySharedThreads(): void {
  for (const hosting of sharedThreads) if (hosting.actors.size === 0) void hosting.worker.terminate();
}

process.on('message', (message: RouterToCell) => {
  if (message.type === 'spawn-thread') spawnThread(message);
  // On a shared thread this stops every actor it serves (stuck native code leaves no other way).
  else if (message.type === 'terminate-thread')
    void byName.get(nameOf(message.actor, message.thread))?.worker.terminate();
  else if (message.type === 'drain') {
    draining = true;
    for (const spare of spares.splice(0)) void spare.terminate();
    stopEmptySharedThreads();
    if (workers.size === 0) process.exit(0);
  }
});

// Ctrl-C in a terminal signals the whole process group: the router decides when a cell stops
// (after draining its threads), so a cell ignores the signals that are the router's to handle.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

// The router went away: threads see their sockets close and finish; leave once they are gone.
process.on('disconnect', () => {
  draining = true;
  for (const spare of spares.splice(0)) void spare.terminate();
  stopEmptySharedThreads();
  if (workers.size === 0) process.exit(0);
  setTimeout(() => process.exit(0), 10_000).unref();
});

if (SHARED_AT_BOOT) {
  for (let i = 0; i < SHARED_THREADS; i++) sharedThread().worker.postMessage({ type: 'share' } satisfies CellToThread);
}
startSpares();
send({ type: 'ready', cell });
reportProcess((stats) => send({ type: 'process', stats }));
