import type { ServerResponse } from 'node:http';

/** Whose response it is (the API's ActorSpec serves): the labels of `anvil_quota_refusals_total` when it is cut. */
export interface ResponseOwner {
  readonly host: string;
  readonly key: string;
}

interface Held {
  bytes: number;
  owner: ResponseOwner;
  api: ApiHeld;
}

/** What one API's responses hold, and its connections in the order each began holding. */
interface ApiHeld {
  bytes: number;
  readonly responses: Set<ServerResponse>;
}

/**
 * The bytes of large responses the router holds for clients that have not taken them yet, in all,
 * under one cap. A body sent from memory counts whole (head included) until it is handed to the
 * kernel; a file the router streams counts the chunk in flight. When holding more would pass the
 * cap, connections are cut until it fits, and only those of an API over its share: the cap split
 * evenly between the APIs holding bytes (the one asking included). The API most over its share
 * loses its connection that has held bytes the longest (its slowest reader: a reader that keeps up
 * releases its chunks, and its place in the line, at once). So a client that stops reading
 * answers of one API costs that API's other readers alone, never another API's. The new response
 * itself is never cut: when only its own API is over its share and has nothing else to give, the
 * total may pass the cap by that one response. A cut is counted for its API.
 */
export class ResponseBuffer {
  private total = 0;
  private readonly held = new Map<ServerResponse, Held>();
  /** By `host/key`; an API is here while one of its responses holds bytes. */
  private readonly apis = new Map<string, ApiHeld>();
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
    while (this.total + bytes > this.capBytes) {
      const victim = this.victim(res, owner, bytes);
      if (victim === null) break;
      this.cut(victim);
    }
    let entry = this.held.get(res);
    if (entry === undefined) {
      const name = apiName(owner);
      let api = this.apis.get(name);
      if (api === undefined) this.apis.set(name, (api = { bytes: 0, responses: new Set() }));
      api.responses.add(res);
      this.held.set(res, (entry = { bytes: 0, owner, api }));
      if (!this.watched.has(res)) {
        this.watched.add(res);
        res.once('close', () => this.releaseAll(res));
      }
    }
    entry.bytes += bytes;
    entry.api.bytes += bytes;
    this.total += bytes;
  }

  release(res: ServerResponse, bytes: number): void {
    const entry = this.held.get(res);
    if (entry === undefined) return;
    const released = Math.min(bytes, entry.bytes);
    entry.bytes -= released;
    entry.api.bytes -= released;
    this.total -= released;
    if (entry.bytes > 0) return;
    this.held.delete(res);
    entry.api.responses.delete(res);
    if (entry.api.responses.size === 0) this.apis.delete(apiName(entry.owner));
  }

  releaseAll(res: ServerResponse): void {
    const entry = this.held.get(res);
    if (entry !== undefined) this.release(res, entry.bytes);
  }

  /**
   * The connection to cut so that `asking` may hold `bytes` more on `res`: the oldest of the API
   * most over its share that has one besides `res`; null when no API over its share has one.
   */
  private victim(res: ServerResponse, asking: ResponseOwner, bytes: number): ServerResponse | null {
    const askingName = apiName(asking);
    const holders = this.apis.size + (this.apis.has(askingName) ? 0 : 1);
    const share = this.capBytes / holders;
    let chosen: ServerResponse | null = null;
    let mostOver = 0;
    for (const [name, api] of this.apis) {
      const over = api.bytes + (name === askingName ? bytes : 0) - share;
      if (over <= mostOver) continue;
      const oldest = firstOtherThan(api.responses, res);
      if (oldest === null) continue;
      chosen = oldest;
      mostOver = over;
    }
    return chosen;
  }

  private cut(res: ServerResponse): void {
    const owner = this.held.get(res)!.owner;
    this.releaseAll(res);
    this.onCut(owner);
    res.destroy();
  }
}

function apiName(owner: ResponseOwner): string {
  return `${owner.host}/${owner.key}`;
}

function firstOtherThan(responses: Set<ServerResponse>, res: ServerResponse): ServerResponse | null {
  for (const other of responses) if (other !== res) return other;
  return null;
}
