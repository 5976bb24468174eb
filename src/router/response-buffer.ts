import type { ServerResponse } from 'node:http';

/** Whose response it is (the API's ActorSpec serves): the labels of `anvil_quota_refusals_total` when it is cut. */
export interface ResponseOwner {
  readonly host: string;
  readonly key: string;
}

interface Held {
  bytes: number;
  owner: ResponseOwner;
}

/**
 * The bytes of large response bodies the router holds for clients that have not taken them yet,
 * in all, under one cap. A body sent from memory counts whole until it is handed to the kernel; a
 * file the router streams counts the chunk in flight. When holding more would pass the cap, the
 * connections that have held bytes the longest (the slowest readers: a reader that keeps up
 * releases its chunks, and its place in the line, at once) are cut until it fits; the new response
 * itself is never refused. A cut is counted for its API.
 */
export class ResponseBuffer {
  private total = 0;
  /** In the order each began holding: the first is the one holding longest. */
  private readonly held = new Map<ServerResponse, Held>();
  private readonly watched = new WeakSet<ServerResponse>();

  constructor(
    readonly capBytes: number,
    private readonly onCut: (owner: ResponseOwner) => void,
  ) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.total;
  }

  hold(res: ServerResponse, bytes: number, owner: ResponseOwner): void {
    for (const [other] of this.held) {
      if (this.total + bytes <= this.capBytes) break;
      if (other !== res) this.cut(other);
    }
    let entry = this.held.get(res);
    if (entry === undefined) {
      this.held.set(res, (entry = { bytes: 0, owner }));
      if (!this.watched.has(res)) {
        this.watched.add(res);
        res.once('close', () => this.releaseAll(res));
      }
    }
    entry.bytes += bytes;
    this.total += bytes;
  }

  release(res: ServerResponse, bytes: number): void {
    const entry = this.held.get(res);
    if (entry === undefined) return;
    const released = Math.min(bytes, entry.bytes);
    entry.bytes -= released;
    this.total -= released;
    if (entry.bytes === 0) this.held.delete(res);
  }

  releaseAll(res: ServerResponse): void {
    const entry = this.held.get(res);
    if (entry !== undefined) this.release(res, entry.bytes);
  }

  private cut(res: ServerResponse): void {
    const owner = this.held.get(res)!.owner;
    this.releaseAll(res);
    this.onCut(owner);
    res.destroy();
  }
}
