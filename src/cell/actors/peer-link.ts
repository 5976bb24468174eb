import { connect, type Socket } from 'node:net';
import { Errors } from '../../shared/errors.js';
import { busFailure, busRequest } from '../../engine/bus-rules.js';
import type { BusCall, BusResponse } from '../../shared/protocol/bus-calls.js';
import { FrameReader, FrameType, FrameWriter } from '../../shared/protocol/frames.js';
import { encodeHello, type ThreadHello } from '../../shared/protocol/hello.js';
import { PendingCalls } from '../../shared/protocol/pending-calls.js';
import { decodeNotTaken } from '../../shared/protocol/peers.js';
import { decodeResponse, encodeRequestHead } from '../../shared/protocol/requests.js';
import { SpinWait } from './spin-wait.js';

interface Pending {
  resolve: (response: BusResponse) => void;
  reject: (error: Error) => void;
  timer?: NodeJS.Timeout;
  call: BusCall;
  timeoutMs: number;
}

/** Sends a call through the router (the way every call goes without a peer). */
export type ViaRouter = (call: BusCall, timeoutMs: number) => Promise<BusResponse>;

/**
 * The caller's end of a connection to a peer: a thread of another API that takes this thread's bus
 * calls directly (the router offered it). It is used once connected, until the peer says Retire,
 * a call to it times out, or the connection breaks; then calls go through the router again. It
 * closes itself once nothing is in flight any more.
 */
export class PeerLink {
  private readonly socket: Socket;
  private readonly writer: FrameWriter;
  private readonly pending = new PendingCalls<Pending>();
  private connected = false;
  /** No new calls: the peer retired, a call timed out, or a newer offer replaced this one. */
  private abandoned = false;
  /** A lone call's answer usually comes within ~0.1 ms: the thread stays awake for it. */
  private readonly spin = new SpinWait(() => this.pending.size === 1);

  constructor(
    readonly actor: string,
    address: string,
    hello: ThreadHello,
    private readonly nextId: () => string,
    private readonly viaRouter: ViaRouter,
    /** This link is no longer usable (its owner forgets it). */
    private readonly onUnusable: (link: PeerLink) => void,
  ) {
    this.socket = connect(address);
    this.socket.setNoDelay(true);
    this.writer = new FrameWriter(this.socket);
    this.writer.write(encodeHello(hello));
    this.socket.on('connect', () => (this.connected = true));
    const reader = new FrameReader((type, payload) => this.onFrame(type, payload));
    this.socket.on('data', (chunk) => reader.push(chunk));
    this.socket.on('error', () => {
      // 'close' follows.
    });
    this.socket.on('close', () => this.closed());
  }

  get usable(): boolean {
    return this.connected && !this.abandoned;
  }

  call(call: BusCall, timeoutMs: number): Promise<BusResponse> {
    const request = busRequest(call, this.nextId());
    return new Promise((resolve, reject) => {
      const entry: Pending = { resolve, reject, call, timeoutMs };
      const number = this.pending.add(entry);
      entry.timer = setTimeout(() => {
        this.pending.giveUp(number);
        reject(Errors.busCallTimeout(call.path, timeoutMs));
        // A peer that does not answer gets no more calls: through the router, a stuck thread is seen and stopped.
        this.abandon();
      }, timeoutMs);
      this.writer.writeFrame(encodeRequestHead(number, request), request.body);
      this.spin.begin();
    });
  }

  /** No new calls; closes once the calls in flight are answered. */
  abandon(): void {
    if (!this.abandoned) {
      this.abandoned = true;
      this.onUnusable(this);
    }
    if (this.pending.size === 0) this.socket.end();
  }

  /** Closes now; calls in flight fail (the thread is going away). */
  destroy(): void {
    this.abandon();
    this.socket.destroy();
  }

  private onFrame(type: number, payload: Buffer): void {
    if (type === FrameType.Retire) {
      const notTaken = decodeNotTaken(payload);
      if (notTaken !== null) this.reroute(notTaken);
      this.abandon();
      return;
    }
    if (type !== FrameType.Response) return;
    const { number, response } = decodeResponse(payload);
    const entry = this.pending.take(number);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    entry.resolve({
      status: response.status,
      headers: response.headers,
      body: response.body,
      budgetLeft: response.budgetLeft ?? 0,
    });
    if (this.abandoned && this.pending.size === 0) this.socket.end();
  }

  /** The peer did not run call `number`: it goes through the router (a timeout restarts with it). */
  private reroute(number: number): void {
    const entry = this.pending.take(number);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.viaRouter(entry.call, entry.timeoutMs).then(entry.resolve, entry.reject);
  }

  private closed(): void {
    this.connected = false;
    this.abandon();
    // What the router's bus answers when the target's thread dies under a call.
    const died = Errors.cellDied();
    for (const entry of this.pending.takeAll()) {
      clearTimeout(entry.timer);
      entry.resolve(busFailure(died));
    }
  }
}
