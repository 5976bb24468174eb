/**
 * Entry of an actor thread (a worker thread inside a cell). It starts as the cell's spare: its
 * modules load while no request waits for it, then the cell hands it one API release (an `assign`
 * message) and it serves that API until it exits — a thread never serves a second API. It connects
 * to the router's socket, says who it is, then runs every request frame through the engine and
 * writes the response frames back. RETIRE (or the router going away) makes it finish what is in
 * flight, AFTER_FLOW included, and exit.
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import type { CompiledRelease } from '../config/types.js';
import { builtinDirectives } from '../directives/catalogue.js';
import { ApiEngine, type ErrorReporter } from '../engine/api-engine.js';
import { prepareParamChecks } from '../engine/param-check.js';
import { emptyFrame, FrameReader, FrameType, FrameWriter, REQUEST_PATH_WRITE_AT_ONCE } from '../protocol/frames.js';
import type { CellToThread, SpareData, ThreadData, ThreadToCell } from '../protocol/cell-messages.js';
import { encodeHello, WIRE_VERSION, type ThreadHello } from '../protocol/hello.js';
import { decodePeerOffer } from '../protocol/peers.js';
import { decodeRequest, encodeResponse, type EngineRequest } from '../protocol/requests.js';
import { encodeStats, type ThreadStats } from '../protocol/stats.js';
import { ActorRuntime } from './actor-runtime.js';
import { BusClient } from './bus-client.js';
import { BusyMeter } from './busy-meter.js';
import { PeerServer } from './peer-server.js';
import { ServedMeter } from './served-meter.js';
import { SandboxMarker } from '../cells/sandbox-markers.js';
import { createSandbox } from './sandbox-setup.js';
import { tracingConfig } from '../tracing/tracing-config.js';

// Work every API's thread needs, done while this thread is still the cell's spare: the checks of
// every built-in, and the connection to the router (its hello names no API yet).
prepareParamChecks(builtinDirectives);
const tracing = tracingConfig();
// Only when tracing is on is OpenTelemetry loaded at all, while this thread is still a spare.
const tracerModule = tracing.enabled ? import('../tracing/otel-tracer.js') : null;
// A failure is reported once the thread has its API (below); until then it must not count as unhandled.
tracerModule?.catch(() => {});
const spare = workerData as SpareData | undefined;
const spareSocket = spare === undefined ? null : dial(spare);
/** Everything this thread tells its cell. */
const toCell = (message: ThreadToCell): void => {
  parentPort?.postMessage(message);
};
toCell({ type: 'spare-ready' });

const data = await new Promise<ThreadData>((resolve) => {
  parentPort!.once('message', (message: CellToThread) => resolve(message.data));
});
const { spec } = data;
/** How long a retiring thread waits for its peers to close their connections. */
const PEER_DRAIN_MS = 5_000;
const release = JSON.parse(readFileSync(spec.compiledFile, 'utf8')) as CompiledRelease;
const runtime = new ActorRuntime(spec, release, (level, msg, fields) => {
  toCell({ type: 'log', level, msg, fields: { api: spec.key, host: spec.host, release: spec.release, ...fields } });
});

if (tracerModule !== null) {
  try {
    const tracer = (await tracerModule).openTracer(tracing, { 'anvil.cell': data.cell });
    runtime.tracer = tracer;
    // Closed (its last spans exported, for 2 s at most) when the thread stops.
    runtime.resource('tracer', () => tracer);
  } catch (error) {
    runtime.log('error', `tracing is off in this thread: OpenTelemetry could not be loaded (${String(error)})`);
  }
}

const reportError: ErrorReporter = (event) => {
  toCell({ type: 'log', level: 'warn', msg: 'directive error', fields: { api: spec.key, host: spec.host, release: spec.release, ...event } });
};
const marker = data.marker === null ? undefined : new SandboxMarker(data.marker.fd, data.marker.slot);
const sandbox = createSandbox(
  release,
  spec.sandbox.maxima,
  (event) => {
    runtime.sandboxBreaches.add(event.kind);
    toCell({ type: 'log', level: 'warn', msg: `custom directive ${event.kind === 'crash' ? 'broke its sandbox' : `over its ${event.kind} limit`}`, fields: { api: spec.key, host: spec.host, release: spec.release, ...event } });
  },
  marker?.enter,
);
if (sandbox !== null) runtime.resource('sandbox', () => sandbox);
const customDirectives = sandbox?.directives() ?? new Map();
const engine = new ApiEngine(release, runtime, (name) => builtinDirectives.get(name) ?? customDirectives.get(name), reportError);

let inFlight = 0;
/** Requests that arrived since the last stats report. */
let arrived = 0;
let retiring = false;
let exiting = false;
/** Requests taken straight from peers, for the router's metrics. */
const served = new ServedMeter();
/** Says so to the router when this thread keeps a core busy (its API may need another thread). */
const busy = runtime.resource('busy-meter', () => new BusyMeter(() => writer.write(emptyFrame(FrameType.Busy))));

// A spare's connection broke meanwhile (or it had none): dial now.
const socket = spareSocket === null || spareSocket.destroyed ? dial(data) : spareSocket;
const writer = new FrameWriter(socket, REQUEST_PATH_WRITE_AT_ONCE);
const hello: ThreadHello = { version: WIRE_VERSION, token: data.token, cell: data.cell, actor: spec.id, thread: data.thread };
const bus = new BusClient(writer, hello);
runtime.bus = bus;
const peers = new PeerServer(
  `${data.socketPath}.${process.pid}.${threadId}`,
  data.token,
  (number, request, peerWriter) => serve(number, request, peerWriter, true),
  () => {
    if (retiring) void exitWhenIdle();
  },
  (peer) => runtime.log('error', `refused a peer thread of cell ${peer.cell}: it speaks wire version ${peer.version}, this thread speaks ${WIRE_VERSION}`, { peerActor: peer.actor, version: peer.version }),
);
const peerAddress = (await peers.listen()) ? peers.address : undefined;
writer.write(encodeHello({ ...hello, peer: peerAddress }));
// From here on a crash is a thread dying, not a thread failing to start (see cell-main).
toCell({ type: 'started' });

function serve(number: number, request: EngineRequest, to: FrameWriter, fromPeer: boolean): void {
  inFlight++;
  arrived++;
  busy.check();
  const startedAt = fromPeer ? performance.now() : 0;
  let pending: void | Promise<void> = undefined;
  try {
    pending = engine.handle(request, (response) => {
      to.write(encodeResponse(number, response));
      if (fromPeer) served.observe(response.route ?? '', response.status, (performance.now() - startedAt) / 1000);
    });
  } catch (error) {
    failed(request, error);
  }
  if (pending === undefined) requestOver();
  else {
    pending.then(requestOver, (error: unknown) => {
      failed(request, error);
      requestOver();
    });
  }
}

/** A defect of the engine (directive errors never land here). */
function failed(request: EngineRequest, error: unknown): void {
  reportError({ requestId: request.id, label: '(thread)', directive: '(thread)', status: 500, message: String(error), pass: 'main' });
}

/** A request is over (its AFTER_FLOW pass included). */
function requestOver(): void {
  inFlight--;
  if (retiring) void exitWhenIdle();
}

const reader = new FrameReader((type, payload) => {
  if (type === FrameType.Request) {
    const { number, request } = decodeRequest(payload);
    serve(number, request, writer, false);
  } else if (type === FrameType.CallResult) {
    bus.settle(payload);
  } else if (type === FrameType.EnqueueResult) {
    bus.settleEnqueue(payload);
  } else if (type === FrameType.Ping) {
    writer.write(emptyFrame(FrameType.Pong));
  } else if (type === FrameType.Peer) {
    bus.offer(decodePeerOffer(payload));
  } else if (type === FrameType.PeerStop) {
    peers.stop();
  } else if (type === FrameType.Retire) {
    retire();
  }
});
socket.on('data', (chunk) => reader.push(chunk));

// What the thread holds and the CPU it used, every 2 s: isolate heap for /anvil/metrics, CPU for the
// router's scheduling (an API that keeps cores busy is moved to the low-priority cell), and the
// calls that went straight between it and its peers (the router did not see them). A thread that
// did next to nothing and holds no isolate stays silent.
const STATS_EVERY_MS = 2_000;
let loopBefore = performance.eventLoopUtilization();
let windowStart = performance.now();
const statsTimer = setInterval(() => {
  if (exiting) return;
  const loop = performance.eventLoopUtilization(loopBefore);
  loopBefore = performance.eventLoopUtilization();
  const now = performance.now();
  const windowMs = now - windowStart;
  windowStart = now;
  // Custom directives run on this thread, so their CPU time is part of the event loop's.
  const cpuMs = loop.active;
  const isolates = sandbox?.isolates ?? 0;
  const requests = arrived;
  arrived = 0;
  const direct = directCounts();
  const sandboxCpu = sandbox?.takeCpu();
  if (isolates === 0 && cpuMs < 1 && !anythingToReport(direct, sandboxCpu)) return;
  writer.write(encodeStats({ isolateHeapBytes: sandbox?.heapBytes() ?? 0, isolates, cpuMs, windowMs, requests, ...direct, sandboxCpu }));
}, STATS_EVERY_MS);
statsTimer.unref();
socket.on('close', () => {
  bus.failAll();
  retire();
});
socket.on('error', () => {
  // 'close' follows; nothing else to do.
});

/** What the router did not see and counts from the thread's report: peer calls, quota refusals. */
function directCounts(): Pick<ThreadStats, 'served' | 'peerCalls' | 'quotaRefusals' | 'logFilesRemoved' | 'sandboxBreaches' | 'outgoing'> {
  const peerCalls = bus.takePeerCalls();
  return {
    served: served.take(),
    peerCalls: peerCalls > 0 ? peerCalls : undefined,
    quotaRefusals: runtime.refusals.take(),
    logFilesRemoved: runtime.logFilesRemoved.take(),
    sandboxBreaches: runtime.sandboxBreaches.take(),
    outgoing: runtime.outgoing.take(),
  };
}

function anythingToReport(direct: ReturnType<typeof directCounts>, sandboxCpu: ThreadStats['sandboxCpu']): boolean {
  return Object.values(direct).some((counted) => counted !== undefined) || sandboxCpu !== undefined;
}

/** No new work: peers are told to call through the router; exit once everything is answered. */
function retire(): void {
  if (retiring) return;
  retiring = true;
  peers.stop();
  // A peer that never closes its connection (stuck) does not keep this thread alive for long.
  setTimeout(() => {
    peers.close();
    void exitWhenIdle();
  }, PEER_DRAIN_MS).unref();
  void exitWhenIdle();
}

function dial({ socketPath, token, cell }: SpareData): Socket {
  const connection = connect(socketPath);
  connection.setNoDelay(true);
  connection.on('error', () => {
    // 'close' follows; a spare's broken connection is replaced when it gets an API.
  });
  connection.write(encodeHello({ version: WIRE_VERSION, token, cell, actor: '', thread: -1 }));
  return connection;
}

async function exitWhenIdle(): Promise<void> {
  if (inFlight > 0 || peers.open > 0 || exiting) return;
  exiting = true;
  await runtime.close();
  const direct = directCounts();
  const sandboxCpu = sandbox?.takeCpu();
  if (anythingToReport(direct, sandboxCpu)) {
    writer.write(encodeStats({ isolateHeapBytes: 0, isolates: 0, cpuMs: 0, windowMs: 1, requests: 0, ...direct, sandboxCpu }));
  }
  // The last responses may still be queued for this turn's flush: write them, and exit once the
  // socket has handed everything to the kernel (or after a second, if the router is gone).
  writer.flushNow();
  setTimeout(() => process.exit(0), 1_000).unref();
  socket.end(() => process.exit(0));
}
