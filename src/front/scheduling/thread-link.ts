import { Errors } from '../../shared/errors.js';
import { emptyFrame, FrameType, type FrameSink } from '../../shared/protocol/frames.js';
import { callResultHead, decodeCall, type BusCall, type CallReply } from '../../shared/protocol/bus-calls.js';
import {
  decodeEnqueue,
  encodeEnqueueResult,
  type EnqueueOutcome,
  type EnqueueRequest,
} from '../../shared/protocol/enqueue.js';
import { decodeNotTaken, encodePeerOffer, type PeerOffer } from '../../shared/protocol/peers.js';
import { encodeRequestHead, responseNumber } from '../../shared/protocol/requests.js';
import { decodeStats, type ThreadStats } from '../../shared/protocol/stats.js';
import type { Conduit, Replaceable } from '../../shared/protocol/thread-channels.js';
import type { PendingRequest } from './pending-request.js';
import { InFlight } from './in-flight.js';

/**
 * The router's end of one actor on a thread: the thread's own socket, or the actor's channel of its
 * shared thread's connection (shared/protocol/thread-channels.ts). Requests are numbered and pipelined;
 * responses may come back in any order. When the socket closes or the channel ends (thread or cell
 * died, or the actor finished), every job still in flight on it fails with 502.
 */
export class ThreadLink {
  private readonly writer: FrameSink;
  private readonly inFlight = new InFlight();
  lastActive = Date.now();
  /** When a frame last came from the thread (any frame: it is alive and its loop turns). */
  lastHeard = Date.now();
  /** A ping sent and not answered yet (0: none). */
  probeSentAt = 0;
  /** Asked the cell to terminate this thread at (0: not asked). */
  terminateAskedAt = 0;
  retired = false;
  closed = false;
  /** Closed (not retired) with requests in flight: its thread or cell died under work. */
  lostWork = false;
  /** The thread's last report of itself. */
  stats: ThreadStats = { isolateHeapBytes: 0, isolates: 0, cpuMs: 0, windowMs: 1, requests: 0 };
  /** When `stats` came (a thread that did next to nothing stops reporting: old figures are stale). */
  statsAt = 0;
  /** Threads this one was told to call directly (each offered once). */
  private readonly peersOffered = new WeakSet<ThreadLink>();

  constructor(
    private readonly conduit: Conduit,
    reader: Replaceable,
    readonly cell: number,
    readonly thread: number,
    /** Where this thread takes bus calls straight from other threads (none: it does not). */
    readonly peerAddress: string | undefined,
    private readonly onSettled: (link: ThreadLink) => void,
    private readonly onClosed: (link: ThreadLink) => void,
    /** A bus call from this thread to another API; `reply` sends the answer (a Response payload) back. */
    private readonly onCall: (call: BusCall, reply: CallReply) => void,
    /** A job to store for this thread's API; `reply` sends the id (or the refusal) back. */
    private readonly onEnqueue: (request: EnqueueRequest, reply: (outcome: EnqueueOutcome) => void) => void,
    /** The thread reported what it holds and the CPU it used. */
    private readonly onStats: (link: ThreadLink) => void = () => {},
    /** The thread says it keeps a core busy (a Busy frame), and why (shared/protocol/busy-reasons.ts; null: it did not say). */
    private readonly onBusy: (reason: number | null) => void = () => {},
    /** The thread gave a request back without running it (a shared thread whose actor is busy): it goes elsewhere. */
    private readonly onNotTaken: (job: PendingRequest) => void = (job) => job.fail(Errors.cellDied()),
  ) {
    this.writer = conduit.writer;
    reader.replace((type, payload) => this.onFrame(type, payload));
    conduit.onClose(() => this.close());
  }

  get load(): number {
    return this.inFlight.size;
  }

  /** How long the oldest request in flight has been waiting (0 when idle). */
  oldestAge(now: number): number {
    return this.inFlight.size === 0 ? 0 : now - this.inFlight.oldestSentAt(now);
  }

  send(job: PendingRequest): void {
    // Ended meanwhile (timed out in the mailbox): a done job no longer holds its request.
    if (job.done) return;
    const now = Date.now();
    // A thread with nothing to do gets its request at once; one that is busy gets requests in
    // batches (a shared thread is busy when any of its actors has work: the connection's load).
    const load = this.conduit.load;
    const idle = load.inFlight === 0;
    const number = this.inFlight.add(job, now);
    load.inFlight++;
    this.lastActive = now;
    const request = job.request;
    // The body goes after the head as it is (readBody's chunks, or a bus call's body): not copied.
    this.writer.writeFrame(encodeRequestHead(number, request), request.body, idle);
  }

  /** No more requests will be sent; the thread finishes its work and exits. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.writer.write(emptyFrame(FrameType.Retire));
  }

  /** Tells this thread that calls to API `key` may go straight to `target` (once per target thread). */
  offerPeer(key: string, target: ThreadLink, actor: string): void {
    if (this.closed || this.retired || target.peerAddress === undefined || this.peersOffered.has(target)) return;
    this.peersOffered.add(target);
    const offer: PeerOffer = { key, actor, address: target.peerAddress };
    this.writer.write(encodePeerOffer(offer));
  }

  /** Its API was superseded: calls from peers must go through the router again (and reach the new release). */
  stopPeers(): void {
    if (!this.closed) this.writer.write(emptyFrame(FrameType.PeerStop));
  }

  /** Asks the thread whether its event loop still turns (answered by a Pong frame). */
  probe(now: number): void {
    this.probeSentAt = now;
    this.writer.write(emptyFrame(FrameType.Ping));
  }

  private onFrame(type: number, payload: Buffer): void {
    this.lastHeard = Date.now();
    if (type === FrameType.Pong) {
      this.probeSentAt = 0;
      return;
    }
    if (type === FrameType.Retire) {
      const number = decodeNotTaken(payload);
      const job = number === null ? undefined : this.take(number);
      if (job !== undefined) this.onNotTaken(job);
      return;
    }
    if (type === FrameType.Busy) {
      // A retired thread takes no new work: whether its API needs another thread is for the ones that do.
      if (!this.retired) this.onBusy(payload.length >= 4 ? payload.readUInt32LE(0) : null);
      return;
    }
    if (type === FrameType.Stats) {
      this.stats = decodeStats(payload);
      this.statsAt = this.lastHeard;
      // Calls its peers sent straight to it keep it from being retired as idle.
      if (this.stats.served !== undefined && this.stats.served.length > 0) this.lastActive = this.lastHeard;
      this.onStats(this);
      return;
    }
    if (type === FrameType.Call) {
      const { number, call } = decodeCall(payload);
      this.onCall(call, (answer) => {
        // The answer's bytes as they came from the target's thread, after the call number.
        if (!this.closed) this.writer.writeFrame(callResultHead(number, answer.length), answer);
      });
      return;
    }
    if (type === FrameType.Enqueue) {
      const { number, request } = decodeEnqueue(payload);
      this.onEnqueue(request, (outcome) => {
        if (!this.closed) this.writer.write(encodeEnqueueResult(number, outcome));
      });
      return;
    }
    if (type !== FrameType.Response) return;
    const job = this.take(responseNumber(payload));
    if (job === undefined) return;
    this.lastActive = Date.now();
    // Read by the job's submitter: decoded for a client, forwarded unread to a bus caller.
    job.answer(payload);
    this.onSettled(this);
  }

  private take(number: number): PendingRequest | undefined {
    const job = this.inFlight.take(number);
    if (job !== undefined) this.conduit.load.inFlight--;
    return job;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.lostWork = !this.retired && this.inFlight.size > 0;
    const jobs = this.inFlight.takeAll();
    this.conduit.load.inFlight -= jobs.length;
    for (const job of jobs) job.fail(Errors.cellDied());
    this.onClosed(this);
  }
}
