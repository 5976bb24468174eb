import type { Socket } from 'node:net';
import type { ConnectionLimits } from './connection-limits.js';

/** How an evicted connection was found: no complete request head yet, or kept alive between requests. */
export type EvictedState = 'half_open' | 'idle';
export type RefusalReason = 'per_client' | 'total';

export interface GateMeters {
  refused(reason: RefusalReason): void;
  evicted(state: EvictedState): void;
}

interface Tracked {
  readonly socket: Socket;
  address: string;
  /** Requests whose head has come and whose response has not ended (more than one when pipelined). */
  inFlight: number;
  /** A request was received on it: when not in flight it is idle, else half-open. */
  served: boolean;
}

interface Holder {
  count: number;
  /** Its connections with no request in flight, the longest without one first. */
  readonly evictable: Set<Tracked>;
}

/**
 * The router's client connections, bounded in all (`limits.total`) and per client address
 * (`limits.perClient`). A connection from an address that holds its share is refused. When the total
 * is reached, a new connection takes the place of one with no request in flight — half-open (no
 * complete head yet) or idle between requests — of the address holding the most connections, the
 * longest idle of them first; only when every connection has a request in flight is it refused.
 * A flood from one address thus costs that address its own connections, never a neighbour's.
 */
export class ConnectionGate {
  private readonly tracked = new Map<Socket, Tracked>();
  private readonly holders = new Map<string, Holder>();
  /** Addresses with an evictable connection, by how many connections they hold. */
  private readonly byCount = new Map<number, Set<string>>();
  /** No address with an evictable connection holds more than this. */
  private top = 0;

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
    if (perClient) {
      const refusal = this.perClientRefusal(address);
      if (refusal !== null) return refusal;
    }
    if (this.tracked.size >= this.limits.total && !this.evictOne()) {
      this.meters.refused('total');
      return 'total';
    }
    const entry: Tracked = { socket, address, inFlight: 0, served: false };
    this.tracked.set(socket, entry);
    this.add(entry);
    socket.once('close', () => this.forget(socket));
    return null;
  }

  /** True (and counted) when a new connection from `address` would be refused for its share: it may then be closed before it is a Socket. */
  refusesClient(address: string): boolean {
    return this.perClientRefusal(address) !== null;
  }

  /** The PROXY header named the connection's client: it counts under that address from now on. */
  identify(socket: Socket, address: string): RefusalReason | null {
    const entry = this.tracked.get(socket);
    if (entry === undefined || entry.address === address) return null;
    this.remove(entry);
    const refusal = this.perClientRefusal(address);
    if (refusal !== null) {
      this.tracked.delete(socket);
      return refusal;
    }
    entry.address = address;
    this.add(entry);
    return null;
  }

  requestStarted(socket: Socket): void {
    const entry = this.tracked.get(socket);
    if (entry === undefined) return;
    entry.served = true;
    if (entry.inFlight++ === 0) this.setEvictable(entry, false);
  }

  requestEnded(socket: Socket): void {
    const entry = this.tracked.get(socket);
    if (entry === undefined || entry.inFlight === 0) return;
    if (--entry.inFlight === 0) this.setEvictable(entry, true);
  }

  private perClientRefusal(address: string): RefusalReason | null {
    if ((this.holders.get(address)?.count ?? 0) < this.limits.perClient || this.exempt(address)) return null;
    this.meters.refused('per_client');
    return 'per_client';
  }

  /** Closes the chosen evictable connection; false when there is none. */
  private evictOne(): boolean {
    while (this.top > 0 && (this.byCount.get(this.top)?.size ?? 0) === 0) this.top--;
    const address = this.top === 0 ? undefined : this.byCount.get(this.top)!.values().next().value;
    if (address === undefined) return false;
    const victim = this.holders.get(address)!.evictable.values().next().value as Tracked;
    this.tracked.delete(victim.socket);
    this.remove(victim);
    this.meters.evicted(victim.served ? 'idle' : 'half_open');
    victim.socket.destroy();
    return true;
  }

  private forget(socket: Socket): void {
    const entry = this.tracked.get(socket);
    if (entry === undefined) return;
    this.tracked.delete(socket);
    this.remove(entry);
  }

  private add(entry: Tracked): void {
    let holder = this.holders.get(entry.address);
    if (holder === undefined) this.holders.set(entry.address, (holder = { count: 0, evictable: new Set() }));
    this.unlist(entry.address, holder);
    holder.count++;
    if (entry.inFlight === 0) holder.evictable.add(entry);
    this.list(entry.address, holder);
  }

  private remove(entry: Tracked): void {
    const holder = this.holders.get(entry.address);
    if (holder === undefined) return;
    this.unlist(entry.address, holder);
    holder.count--;
    holder.evictable.delete(entry);
    if (holder.count === 0) this.holders.delete(entry.address);
    else this.list(entry.address, holder);
  }

  private setEvictable(entry: Tracked, evictable: boolean): void {
    const holder = this.holders.get(entry.address);
    if (holder === undefined) return;
    this.unlist(entry.address, holder);
    if (evictable) holder.evictable.add(entry);
    else holder.evictable.delete(entry);
    this.list(entry.address, holder);
  }

  private list(address: string, holder: Holder): void {
    if (holder.evictable.size === 0) return;
    let addresses = this.byCount.get(holder.count);
    if (addresses === undefined) this.byCount.set(holder.count, (addresses = new Set()));
    addresses.add(address);
    if (holder.count > this.top) this.top = holder.count;
  }

  private unlist(address: string, holder: Holder): void {
    const addresses = this.byCount.get(holder.count);
    if (addresses === undefined) return;
    addresses.delete(address);
    if (addresses.size === 0) this.byCount.delete(holder.count);
  }
}
