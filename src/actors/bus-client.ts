import { AnvilError } from '../errors.js';
import type { FrameWriter } from '../protocol/frames.js';
import { decodeCallResult, decodeEnqueueResult, encodeCall, encodeEnqueue, type BusCall, type BusResponse } from '../protocol/messages.js';

/**
 * The actor thread's end of the in-process bus: calls (and jobs to store) go to the router on the
 * thread's own socket and their answers come back on it. Calls are pipelined; a caller awaits
 * without blocking the thread.
 */
export class BusClient {
  private readonly pending = new Map<number, { resolve: (r: BusResponse) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private readonly enqueues = new Map<number, { resolve: (id: string) => void; reject: (e: Error) => void }>();
  private next = 1;

  constructor(private readonly writer: FrameWriter) {}

  call(call: BusCall, timeoutMs: number): Promise<BusResponse> {
    const number = this.next;
    this.next = number === 0xffffffff ? 1 : number + 1;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(number);
        reject(new AnvilError('ANVIL_ERR_UPSTREAM_TIMEOUT', 504, `the call to ${call.path} took longer than ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(number, { resolve, reject, timer });
      this.writer.write(encodeCall(number, call));
    });
  }

  /** Asks the router to store a job; resolves to its id once it is durable. */
  enqueue(payload: string, delayMs: number): Promise<string> {
    const number = this.next;
    this.next = number === 0xffffffff ? 1 : number + 1;
    return new Promise((resolve, reject) => {
      this.enqueues.set(number, { resolve, reject });
      this.writer.write(encodeEnqueue(number, { payload, delayMs }));
    });
  }

  /** An EnqueueResult frame arrived. */
  settleEnqueue(payload: Buffer): void {
    const { number, outcome } = decodeEnqueueResult(payload);
    const entry = this.enqueues.get(number);
    if (entry === undefined) return;
    this.enqueues.delete(number);
    if (outcome.ok) entry.resolve(outcome.id);
    else entry.reject(new AnvilError('ANVIL_ERR_ENQUEUE', outcome.status, outcome.error));
  }

  /** A CallResult frame arrived. */
  settle(payload: Buffer): void {
    const { number, response } = decodeCallResult(payload);
    const entry = this.pending.get(number);
    if (entry === undefined) return;
    this.pending.delete(number);
    clearTimeout(entry.timer);
    entry.resolve(response);
  }

  /** The router went away: every call in flight fails. */
  failAll(): void {
    for (const [, entry] of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(new AnvilError('ANVIL_ERR_BUS_CLOSED', 502, 'the in-process bus closed'));
    }
    this.pending.clear();
    for (const [, entry] of this.enqueues) entry.reject(new AnvilError('ANVIL_ERR_BUS_CLOSED', 503, 'the job was not stored: the router went away'));
    this.enqueues.clear();
  }
}
