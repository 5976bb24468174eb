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
  readonly host: HostHeld;
  readonly responses: Set<ServerResponse>;
}

/** What one public host's APIs hold, by key; a host is here while one of its responses holds bytes. */
interface HostHeld {
  bytes: number;
  readonly apis: Map<string, ApiHeld>;
}

/**
 * The bytes of large responses the router holds for clients that have not taken them yet, in all,
 * under one cap. A body sent from memory counts whole (head included) until it is handed to the
 * kernel; a file the router streams counts the chunk in flight. When holding more would pass the
 * cap, connections are cut until it fits, and only those of a tenant over its share: the cap is
 * split evenly between the public hosts holding bytes (the one asking included), then each host's
 * share evenly between its APIs holding bytes. Within the host most over its share, the API most
 * over its share loses its connection that has held bytes the longest (its slowest reader: a reader
 * that keeps up releases its chunks, and its place in the line, at once). So a client that stops
 * reading answers of one API costs that API's other readers alone, and a host that deploys many
 * APIs gains no share from the others: it cuts only its own. The new response itself is never cut:
 * when only its own API is over its share and has nothing else to give, the total may pass the cap
 * by that one response. A cut is counted for its API.
 */
export class ResponseBuffer {
  private total = 0;
  private readonly held = new Map<ServerResponse, Held>();
  /** By host; a host and an API are here while one of their responses holds bytes. */
  private readonly hosts = new Map<string, HostHeld>();
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
      let host = this.hosts.get(owner.host);
      if (host === undefined) this.hosts.set(owner.host, (host = { bytes: 0, apis: new Map() }));
      let api = host.apis.get(owner.key);
      if (api === undefined) host.apis.set(owner.key, (api = { bytes: 0, host, responses: new Set() }));
      api.responses.add(res);
      this.held.set(res, (entry = { bytes: 0, owner, api }));
      if (!this.watched.has(res)) {
        this.watched.add(res);
        res.once('close', () => this.releaseAll(res));
      }
    }
    entry.bytes += bytes;
    entry.api.bytes += bytes;
    entry.api.host.bytes += bytes;
    this.total += bytes;
  }

  release(res: ServerResponse, bytes: number): void {
    const entry = this.held.get(res);
    if (entry === undefined) return;
    const released = Math.min(bytes, entry.bytes);
    const { api, owner } = entry;
    entry.bytes -= released;
    api.bytes -= released;
    api.host.bytes -= released;
    this.total -= released;
    if (entry.bytes > 0) return;
    this.held.delete(res);
    api.responses.delete(res);
    if (api.responses.size > 0) return;
    api.host.apis.delete(owner.key);
    if (api.host.apis.size === 0) this.hosts.delete(owner.host);
  }

  releaseAll(res: ServerResponse): void {
    const entry = this.held.get(res);
    if (entry !== undefined) this.release(res, entry.bytes);
  }

  /**
   * The connection to cut so that `asking` may hold `bytes` more on `res`: the oldest of the API
   * most over its share within the host most over its share that has one (besides `res`) in an API
   * over its share; null when no host over its share has one.
   */
  private victim(res: ServerResponse, asking: ResponseOwner, bytes: number): ServerResponse | null {
    const hostShare = this.capBytes / (this.hosts.size + (this.hosts.has(asking.host) ? 0 : 1));
    let chosen: ServerResponse | null = null;
    let mostOver = 0;
    for (const [name, host] of this.hosts) {
      const own = name === asking.host;
      const over = host.bytes + (own ? bytes : 0) - hostShare;
      if (over <= mostOver) continue;
      const oldest = oldestOfMostOver(host, hostShare, own ? asking.key : null, bytes, res);
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

/** Within `host` (its share `share`; `askingKey` its API asking for `bytes` more, if any): the oldest connection of its API most over its share that has one besides `res`. */
function oldestOfMostOver(
  host: HostHeld,
  share: number,
  askingKey: string | null,
  bytes: number,
  res: ServerResponse,
): ServerResponse | null {
  const apiShare = share / (host.apis.size + (askingKey === null || host.apis.has(askingKey) ? 0 : 1));
  let chosen: ServerResponse | null = null;
  let mostOver = 0;
  for (const [key, api] of host.apis) {
    const over = api.bytes + (key === askingKey ? bytes : 0) - apiShare;
    if (over <= mostOver) continue;
    const oldest = firstOtherThan(api.responses, res);
    if (oldest === null) continue;
    chosen = oldest;
    mostOver = over;
  }
  return chosen;
}

function firstOtherThan(responses: Set<ServerResponse>, res: ServerResponse): ServerResponse | null {
  for (const other of responses) if (other !== res) return other;
  return null;
}
