import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { openPool } from '../../deploy/control-plane/pg-session.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { ApiDirectory, ApiEntry } from '../scheduling/api-directory.js';
import { OwnerForwarder, refusePlacement, type OwnerTarget } from './forward-to-owner.js';
import { forwardedEpoch } from './internal-door.js';
import { SERVED_BY_HEADER } from './internal-headers.js';
import { OwnerCalls } from './owner-calls.js';
import { PlacedWork, type PlacementView } from './placed-work.js';
import { PlacementLoop, type PlacedApi } from './placement-loop.js';
import { PlacementMap, type Route } from './placement-map.js';
import { PgPlacementStore } from './pg-placement-store.js';
import { PlacedReleases, placementId } from './placed-releases.js';

export interface PlacementStart {
  databaseUrl: string;
  leaseMs: number;
  requestTimeoutMs: number;
  directory: ApiDirectory;
  /** The client's address as the public listener sees it (PROXY header, trusted proxies). */
  clientAddress(req: IncomingMessage): string;
  /**
   * The API's threads here stop taking calls straight from other threads (peers): this instance
   * no longer owns it, and a peer would bypass the router, which now sends its calls to the owner.
   */
  retirePeers(host: string, key: string): void;
  log: InstanceLog;
}

/** Hands a request for `api` to whoever serves it: `serveHere` runs it on this instance. */
export type PlaceRequest = (req: IncomingMessage, res: ServerResponse, api: ApiEntry, serveHere: () => void) => void;

/**
 * Cluster mode's placement of APIs that keep data on an instance's disk: each has one owner
 * instance at a time (a lease with an epoch in Postgres, placement-loop.ts). A request that
 * reaches another instance is forwarded to the owner's internal port; the owner serves it only
 * while its lease is valid by its own clock, which runs out before Postgres lets another take it.
 */
export class Placement {
  readonly self = randomBytes(6).toString('hex');
  private readonly map = new PlacementMap(this.self);
  private readonly placed = new PlacedReleases();
  private readonly forwarder: OwnerForwarder;
  private readonly calls: OwnerCalls;
  /** Jobs and bus calls of placed APIs: run by their owner (placed-work.ts). */
  readonly work: PlacedWork;
  private loop: PlacementLoop | null = null;
  private closed = false;

  private constructor(
    private readonly store: PgPlacementStore,
    private readonly pool: { end(): Promise<void> },
    readonly secret: string,
    private readonly options: PlacementStart,
  ) {
    this.forwarder = new OwnerForwarder({
      secret,
      responseTimeoutMs: options.requestTimeoutMs + 5_000,
      clientAddress: options.clientAddress,
      unreachable: (target) => this.setAside(target),
      log: options.log,
    });
    this.calls = new OwnerCalls(secret, options.requestTimeoutMs + 5_000);
    const view: PlacementView = {
      isPlaced: (api) => this.placed.isPlaced(api),
      route: (id) => this.map.route(id),
      routeBy: (id, deadline) => this.routeBy(id, deadline),
      setAside: (target) => this.setAside(target),
      callWaitMs: () => this.waitMs(),
      // A dead owner's lease runs out, then a round (lease/8) gives the API to a live instance.
      jobWaitMs: () => 2 * options.leaseMs + 2_000,
    };
    this.work = new PlacedWork(view, this.calls, options.log);
  }

  /** Opens its connections and reads (or makes) the cluster secret; `begin` starts the rounds. */
  static async open(options: PlacementStart): Promise<Placement> {
    const pool = openPool(options.databaseUrl);
    try {
      const store = new PgPlacementStore(pool);
      return new Placement(store, pool, await store.clusterSecret(), options);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  /** Registers this instance with its internal listener's URL and runs the first round before it resolves. */
  async begin(internalUrl: string): Promise<void> {
    this.loop = new PlacementLoop(
      this.store,
      this.map,
      {
        self: this.self,
        internalUrl,
        leaseMs: this.options.leaseMs,
        wanted: () => this.wanted(),
        lost: (id) => this.lost(id),
      },
      this.options.log,
    );
    this.options.log.info(
      { instance: this.self, internalUrl, leaseMs: this.options.leaseMs },
      'placement: this instance takes part in placement',
    );
    await this.loop.start();
  }

  /** The public listener's hook: here when this instance owns the API (or it is not placed), else to its owner. */
  readonly place: PlaceRequest = (req, res, api, serveHere) => {
    if (!this.placed.isPlaced(api)) return serveHere();
    this.route(req, res, placementId(api.spec.host, api.spec.key), serveHere, Date.now() + this.waitMs());
  };

  /** The internal listener's hook: forwarded requests are served by the owner only, never forwarded again. */
  readonly placeInternal: PlaceRequest = (req, res, api, serveHere) => {
    if (!this.placed.isPlaced(api)) return serveHere();
    const refused = this.refusal(placementId(api.spec.host, api.spec.key), forwardedEpoch(req));
    if (refused !== null) return refusePlacement(res, refused);
    res.setHeader(SERVED_BY_HEADER, this.self);
    serveHere();
  };

  /** On the internal port: null when this instance may run the API's work now, else why not. */
  refusal(id: string, epoch: number): string | null {
    const route = this.map.route(id);
    if (route.kind !== 'here') return 'this instance does not own the API (its lease ran out or moved)';
    // The forwarder knows of a later ownership than the one this instance holds: it is not the owner.
    return epoch > route.epoch ? 'a later owner of the API exists' : null;
  }

  /** The owner did not answer (or refused): forgotten until the next round, which comes soon; true the first time. */
  private setAside(target: OwnerTarget): boolean {
    this.loop?.soon();
    return this.map.forget(target.api, target.owner);
  }

  /** The API's route once an owner is known; `none` once `deadline` (Date.now()) passes or placement closes. */
  private async routeBy(id: string, deadline: number): Promise<Route> {
    for (;;) {
      const route = this.map.route(id);
      const left = deadline - Date.now();
      if (route.kind !== 'none' || this.closed || left <= 0) return route;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.map.nextRound(), new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  }

  private route(req: IncomingMessage, res: ServerResponse, id: string, serveHere: () => void, deadline: number): void {
    const route = this.map.route(id);
    if (route.kind === 'here') {
      res.setHeader(SERVED_BY_HEADER, this.self);
      return serveHere();
    }
    if (route.kind === 'owner')
      return this.forwarder.forward(req, res, { api: id, owner: route.owner, epoch: route.epoch, url: route.url });
    // No valid lease known: a round will find or make the owner (an owner died: after its lease).
    if (this.closed || Date.now() >= deadline) return refusePlacement(res, "no instance holds the API's lease yet");
    void this.map.nextRound().then(() => {
      if (res.destroyed) return;
      try {
        this.route(req, res, id, serveHere, deadline);
      } catch (error) {
        this.options.log.error({ err: error, api: id }, 'placement: a request could not be routed');
        refusePlacement(res, 'the request could not be routed');
      }
    });
  }

  /** A request waits for an owner at most two leases (within the request timeout). */
  private waitMs(): number {
    return Math.min(this.options.requestTimeoutMs, 2 * this.options.leaseMs);
  }

  private lost(id: string): void {
    const slash = id.indexOf('/');
    this.options.retirePeers(id.slice(0, slash), id.slice(slash + 1));
  }

  private wanted(): PlacedApi[] {
    const wanted: PlacedApi[] = [];
    for (const host of this.options.directory.publicHosts()) {
      for (const api of this.options.directory.apisOf(host.name))
        if (api.record.active && this.placed.isPlaced(api)) wanted.push({ host: host.name, key: api.record.key });
    }
    return wanted;
  }

  /** Once the listeners are closed and in-flight work is done: gives the leases back, so others take over at once. */
  async close(): Promise<void> {
    this.closed = true;
    await this.loop?.close(true);
    this.map.wake();
    this.forwarder.close();
    this.calls.close();
    await this.pool.end().catch(() => undefined);
  }
}
