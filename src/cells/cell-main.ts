/**
 * Entry of a cell process. It runs no request itself: it starts the actor threads the router asks
 * for (each connects straight to the router's socket), reports their exits, and exits when told to
 * drain once its threads are gone. A fatal error of tenant code kills this process, never the router.
 */
import { setPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { CellToRouter, RouterToCell, ThreadData } from '../protocol/messages.js';

const cell = Number(process.argv[process.argv.indexOf('--cell') + 1]);
// Threads inherit the priority of the thread that starts them: set it before starting any, so the
// actor threads and the isolates' threads of a low-priority cell all run below everything else.
const nice = Number(process.argv[process.argv.indexOf('--nice') + 1] ?? 0);
if (nice > 0) setPriority(nice);
const socketPath = (process.env.ANVIL_ROUTER_SOCKET ?? '').replace(/^@/, '\0');
const token = process.env.ANVIL_CELL_TOKEN ?? '';
delete process.env.ANVIL_CELL_TOKEN;

const threadEntry = new URL('../actors/actor-thread.js', import.meta.url);
const workers = new Set<Worker>();
/**
 * A thread whose modules are loaded and which serves no API yet: the next API that needs a thread
 * gets it, so a cold start skips starting a worker and loading the engine (~100 ms → a few ms).
 * Replaced a moment after it is taken, off the path of the request that took it.
 */
let spare: Worker | null = null;
const SPARE_DELAY_MS = 100;
/** `<actor>#<thread>` → its worker, for terminate-thread. */
const byName = new Map<string, Worker>();
let draining = false;

function send(message: CellToRouter): void {
  if (process.connected) process.send!(message);
}

function newWorker(): Worker {
  return new Worker(threadEntry, { env: {}, stdout: false, stderr: false });
}

function startSpare(): void {
  if (draining || spare !== null) return;
  const worker = newWorker();
  spare = worker;
  worker.on('error', (error) => send({ type: 'log', level: 'error', msg: 'spare actor thread failed', fields: { error: error.message } }));
  worker.on('exit', () => {
    if (spare !== worker) return;
    spare = null;
    setTimeout(startSpare, 1_000).unref();
  });
}

function takeWorker(): Worker {
  const worker = spare ?? newWorker();
  if (spare !== null) {
    spare.removeAllListeners();
    spare = null;
  }
  setTimeout(startSpare, SPARE_DELAY_MS).unref();
  return worker;
}

function spawnThread(message: Extract<RouterToCell, { type: 'spawn-thread' }>): void {
  if (draining) return;
  const data: ThreadData = { spec: message.actor, thread: message.thread, socketPath, token, cell };
  const worker = takeWorker();
  worker.postMessage({ type: 'assign', data });
  workers.add(worker);
  const name = `${message.actor.id}#${message.thread}`;
  byName.set(name, worker);
  let started = false;
  let failed = false;
  worker.on('message', (msg: CellToRouter | { type: 'started' }) => {
    if (msg?.type === 'started') started = true;
    else if (msg?.type === 'log') send(msg);
  });
  worker.on('error', (error) => {
    if (started) {
      send({ type: 'log', level: 'error', msg: 'actor thread crashed', fields: { actor: message.actor.id, thread: message.thread, error: error.message } });
      return;
    }
    failed = true;
    send({ type: 'thread-failed', actor: message.actor.id, thread: message.thread, error: error.message });
  });
  worker.on('exit', (code) => {
    workers.delete(worker);
    byName.delete(name);
    if (!failed) send({ type: 'thread-exit', actor: message.actor.id, thread: message.thread, code });
    if (draining && workers.size === 0) process.exit(0);
  });
}

process.on('message', (message: RouterToCell) => {
  if (message.type === 'spawn-thread') spawnThread(message);
  else if (message.type === 'terminate-thread') void byName.get(`${message.actor}#${message.thread}`)?.terminate();
  else if (message.type === 'drain') {
    draining = true;
    void spare?.terminate();
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
  void spare?.terminate();
  if (workers.size === 0) process.exit(0);
  setTimeout(() => process.exit(0), 10_000).unref();
});

startSpare();
send({ type: 'ready', cell });
