import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { clientGroup } from './client-group.js';
import type { ConnectionLimits } from './connection-limits.js';
import { CountBuckets } from './count-buckets.js';

/**
 * How an evicted connection was found: no complete request head yet, kept alive between requests,
 * its request's body still arriving, or with a request in flight (its client held the most).
 */
export type EvictedState = 'half_open' | 'idle' | 'receiving' | 'busy';
export type RefusalReason = 'per_client' | 'total';

export interface GateMeters {
  refused(reason: RefusalReason): void;
  evicted(state: EvictedState): void;
}

interface Tracked {
  readonly socket: Socket;
  /** The client's address (exemptions are by address) … */
  address: string;
  /** … and what it is counted under (its /64 for IPv6). */
  holder: Holder;
  /** Requests whose head has come and whose response has not ended (more than one when pipelined). */
  inFlight: number;
  /** A request was received on it: when not in flight it is idle, else half-open. */
  served: boolean;
  /** The one request in flight while its body is still arriving (the connection stays evictable), else null. */
  receiving: IncomingMessage | null;
  /** Its responses' 'close' listener, made once per connection. */
  readonly responseClosed: () => void;
}

interface Holder {
  readonly group: string;
  count: number;
  /** All its connections, oldest first. */
  readonly all: Set<Tracked>;
  /** Its connections with no request fully received in flight, the longest so first. */
  readonly evictable: Set<Tracked>;
}

/**
 * The router's client connections, bounded in all (`limits.total`) and per client (`limits.perClient`;
 * a client is an IPv4 address or an IPv6 /64). A connection from a client that holds its share is
 * refused. When the total is reached, a new connection takes the place of an evictable one — half-open
 * (no complete head yet), idle between requests, or whose request's body is still arriving — of the
 * client holding the most connections, the longest evictable first. When none is evictable, it takes
 * the oldest connection of the client holding the most, if that client holds at least two more than
 * the newcomer's: connections held are thus shared max-min fairly, and a client can take a
 * neighbour's request in flight only from a neighbour holding more than itself. Only when no client
 * holds more than one more than the newcomer's is the newcomer refused.
 */
export class ConnectionGate {
  private readonly tracked = new Map<Socket, Tracked>();
  private readonly holders = new Map<string, Holder>();
  /** Clients by how many connections they hold: all, and those with an evictable connection. */
  private readonly byCount = new CountBuckets<Holder>();
  private readonly evictableByCount = new CountBuckets<Holder>();

  constructor(
    private readonly limits: ConnectionLimits,
    /** Addresses not bound per client (trusted proxies: every client behind them shares their address). */
    private readonly exempt: (address: string) => boolean,
    private readonly meters: GateMeters,
  ) {}

  get open(): number {
    return this.tracked.size;
  }

  /**
   * A new connection from `address`; `perClient` false while its client is not known yet (behind a
   * balancer, until the PROXY header names it). Returns the refusal when it may not stay open.
   */
  admit(socket: Socket, address: string, perClient: boolean): RefusalReason | null {
    const group = clientGroup(address);
    if (perClient) {
      const refusal = this.perClientRefusal(address, group);
      if (refusal !== null) return refusal;
    }
    if (this.tracked.size >= this.limits.total && !this.evictOne(group)) {
      this.meters.refused('total');
      return 'total';
    }
    const entry: Tracked = {
      socket,
      address,
      holder: this.holderOf(group),
      inFlight: 0,
      served: false,
      receiving: null,
      responseClosed: () => this.responseClosed(entry),
    };
    this.tracked.set(socket, entry);
    this.add(entry);
    socket.once('close', () => this.forget(socket));
    return null;
  }

  /** True (and counted) when a new connection from `address` would be refused for its share: it may then be closed before it is a Socket. */
  refusesClient(address: string): boolean {
    return this.perClientRefusal(address, clientGroup(address)) !== null;
  }

  /** The PROXY header named the connection's client: it counts under that client from now on. */
  identify(socket: Socket, address: string): RefusalReason | null {
    const entry = this.tracked.get(socket);
    if (entry === undefined || entry.address === address) return null;
    const group = clientGroup(address);
    this.remove(entry);
    const refusal = this.perClientRefusal(address, group);
    if (refusal !== null) {
      this.tracked.delete(socket);
      return refusal;
    }
    entry.address = address;
    entry.holder = this.holderOf(group);
    this.add(entry);
    return null;
  }

  /**
   * node's 'request' (the head has come). The connection stays evictable while the body arrives: a
   * body sent a byte a second must not make a connection unevictable. Allocates nothing.
   */
  requestStarted(req: IncomingMessage, res: ServerResponse): void {
    const entry = this.tracked.get(req.socket);
    if (entry === undefined) return;
    entry.served = true;
    res.on('close', entry.responseClosed);
    if (entry.inFlight++ === 0 && hasBody(req) && !req.complete) {
      entry.receiving = req;
      return;
    }
    entry.receiving = null;
    this.setEvictable(entry, false);
  }

  private responseClosed(entry: Tracked): void {
    if (entry.inFlight === 0) return;
    if (--entry.inFlight === 0) {
      entry.receiving = null;
      this.setEvictable(entry, true);
    }
  }

  private perClientRefusal(address: string, group: string): RefusalReason | null {
    if ((this.holders.get(group)?.count ?? 0) < this.limits.perClient || this.exempt(address)) return null;
    this.meters.refused('per_client');
    return 'per_client';
  }

  /** Closes the chosen connection to make room for one of `group`; false when none may be. */
  private evictOne(group: string): boolean {
    for (let holder = this.evictableByCount.first(); holder !== undefined; holder = this.evictableByCount.first()) {
      const victim = holder.evictable.values().next().value as Tracked;
      // Its body has come since: the request is the API's now (checked here, not per request).
      if (victim.receiving?.complete === true) {
        victim.receiving = null;
        this.setEvictable(victim, false);
        continue;
      }
      this.evict(victim, victim.receiving !== null ? 'receiving' : victim.served ? 'idle' : 'half_open');
      return true;
    }
    const most = this.byCount.first();
    if (most === undefined || most.count < (this.holders.get(group)?.count ?? 0) + 2) return false;
    this.evict(most.all.values().next().value as Tracked, 'busy');
    return true;
  }

  private evict(victim: Tracked, state: EvictedState): void {
    this.tracked.delete(victim.socket);
    this.remove(victim);
    this.meters.evicted(state);
    victim.socket.destroy();
  }

  private forget(socket: Socket): void {
    const entry = this.tracked.get(socket);
    if (entry === undefined) return;
    this.tracked.delete(socket);
    this.remove(entry);
  }

  private holderOf(group: string): Holder {
    let holder = this.holders.get(group);
    if (holder === undefined)
      this.holders.set(group, (holder = { group, count: 0, all: new Set(), evictable: new Set() }));
    return holder;
  }

  private add(entry: Tracked): void {
    const holder = entry.holder;
    this.unlist(holder);
    holder.count++;
    holder.all.add(entry);
    if (entry.inFlight === 0 || entry.receiving !== null) holder.evictable.add(entry);
    this.list(holder);
  }

  private remove(entry: Tracked): void {
    const holder = entry.holder;
    if (!holder.all.delete(entry)) return;
    this.unlist(holder);
    holder.count--;
    holder.evictable.delete(entry);
    if (holder.count === 0) this.holders.delete(holder.group);
    else this.list(holder);
  }

  private setEvictable(entry: Tracked, evictable: boolean): void {
    const holder = entry.holder;
    if (!holder.all.has(entry) || holder.evictable.has(entry) === evictable) return;
    if (evictable) {
      if (holder.evictable.size === 0) this.evictableByCount.add(holder, holder.count);
      holder.evictable.add(entry);
    } else {
      holder.evictable.delete(entry);
      if (holder.evictable.size === 0) this.evictableByCount.delete(holder, holder.count);
    }
  }

  private list(holder: Holder): void {
    if (holder.count === 0) return;
    this.byCount.add(holder, holder.count);
    if (holder.evictable.size > 0) this.evictableByCount.add(holder, holder.count);
  }

  private unlist(holder: Holder): void {
    this.byCount.delete(holder, holder.count);
    this.evictableByCount.delete(holder, holder.count);
  }
}

/** As readBody decides: a request with neither content-length nor transfer-encoding (or a zero length) has no body. */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
