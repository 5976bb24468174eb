import { Errors, isQuotaCode, quotaErrorFromWire } from '../../shared/errors.js';
import type { FrameSink } from '../../shared/protocol/frames.js';
import { PendingCalls } from '../../shared/protocol/pending-calls.js';
import { requestIdGenerator } from '../../shared/protocol/request-id.js';
import type { JobQuota } from '../../shared/protocol/enqueue.js';
import { MAX_BUS_HOPS, splitApiPath } from '../../engine/bus-rules.js';
import { decodeCallResult, encodeCallHead, type BusCall, type BusResponse } from '../../shared/protocol/bus-calls.js';
import { decodeEnqueueResult, encodeEnqueue } from '../../shared/protocol/enqueue.js';
import type { ThreadHello } from '../../shared/protocol/hello.js';
import type { PeerOffer } from '../../shared/protocol/peers.js';
import { PeerLink } from './peer-link.js';

/** A call sent through the router, waiting for its CallResult. */
interface RouterCall {
  resolve: (response: BusResponse) => void;
  reject: (error: Error) => void;
  timer?: NodeJS.Timeout;
}

/**
 * The actor thread's end of the in-process bus: calls (and jobs to store) go to the router on the
 * thread's own socket and their answers come back on it. Once the router has offered a thread of the
 * called API as a peer, calls to that API go straight to it (one socket each way instead of two).
 * Calls are pipelined; a caller awaits without blocking the thread.
 */
export class BusClient {
  private readonly pending = new PendingCalls<RouterCall>();
  private readonly enqueues = new PendingCalls<{ resolve: (id: string) => void; reject: (e: Error) => void }>();
  /** API key → the peer its calls go to. */
  private readonly peers = new Map<string, PeerLink>();
  private readonly nextId = requestIdGenerator();
  /** Calls sent to peers since the last `takePeerCalls` (the router counts the others itself). */
  private peerCalls = 0;
  private closed = false;

  /** `hello` introduces this thread to its peers (no hello: calls always go through the router). */
  constructor(
    private readonly writer: FrameSink,
    private readonly hello?: ThreadHello,
  ) {}

  /** The router offered a thread of API `offer.key`: connect to it; calls use it once connected. */
  offer(offer: PeerOffer): void {
    if (this.hello === undefined || this.closed) return;
    const current = this.peers.get(offer.key);
    if (current !== undefined && current.actor === offer.actor && current.usable) return;
    const link = new PeerLink(
      offer.actor,
      offer.address,
      this.hello,
      this.nextId,
      (call, timeoutMs) => {
        // Not run by the peer: the router counts it.
        this.peerCalls--;
        return this.viaRouter(call, timeoutMs);
      },
      (unusable) => {
        if (this.peers.get(offer.key) === unusable) this.peers.delete(offer.key);
      },
    );
    this.peers.set(offer.key, link);
    current?.abandon();
  }

  takePeerCalls(): number {
    // Below 0 when calls counted in an earlier report were sent back to the router since.
    const calls = Math.max(0, this.peerCalls);
    this.peerCalls -= calls;
    return calls;
  }

  call(call: BusCall, timeoutMs: number): Promise<BusResponse> {
    // Deeper than allowed: the router answers 508.
    const peer = call.hop < MAX_BUS_HOPS ? this.peers.get(splitApiPath(call.path).key) : undefined;
    if (peer !== undefined && peer.usable) {
      this.peerCalls++;
      return peer.call(call, timeoutMs);
    }
    return this.viaRouter(call, timeoutMs);
  }

  private viaRouter(call: BusCall, timeoutMs: number): Promise<BusResponse> {
    return new Promise((resolve, reject) => {
      const entry: RouterCall = { resolve, reject };
      const number = this.pending.add(entry);
      entry.timer = setTimeout(() => {
        this.pending.giveUp(number);
        reject(Errors.busCallTimeout(call.path, timeoutMs));
      }, timeoutMs);
      this.writer.writeFrame(encodeCallHead(number, call), call.body);
    });
  }

  /** Asks the router to store a job; resolves to its id once it is durable. */
  enqueue(payload: string, delayMs: number, quota: JobQuota): Promise<string> {
    return new Promise((resolve, reject) => {
      const number = this.enqueues.add({ resolve, reject });
      this.writer.write(encodeEnqueue(number, { payload, delayMs, quota }));
    });
  }

  /** An EnqueueResult frame arrived. */
  settleEnqueue(payload: Buffer): void {
    const { number, outcome } = decodeEnqueueResult(payload);
    const entry = this.enqueues.take(number);
    if (entry === undefined) return;
    if (outcome.ok) entry.resolve(outcome.id);
    else if (outcome.code !== undefined && isQuotaCode(outcome.code))
      entry.reject(quotaErrorFromWire(outcome.code, outcome.status, outcome.error, outcome.retryAfter));
    else entry.reject(Errors.enqueueRefused(outcome.status, outcome.error));
  }

  /** A CallResult frame arrived. */
  settle(payload: Buffer): void {
    const { number, response } = decodeCallResult(payload);
    const entry = this.pending.take(number);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    entry.resolve(response);
  }

  /** The router went away: every call in flight fails. */
  failAll(): void {
    this.closed = true;
    for (const peer of [...this.peers.values()]) peer.destroy();
    this.peers.clear();
    for (const entry of this.pending.takeAll()) {
      clearTimeout(entry.timer);
      entry.reject(Errors.busClosed());
    }
    for (const entry of this.enqueues.takeAll()) entry.reject(Errors.enqueueRouterGone());
  }
}
