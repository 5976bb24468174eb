import { latencyBucket } from '../../shared/metrics/buckets.js';
import { FIELD, SecondRing } from '../../shared/metrics/second-ring.js';

/** Five minutes: the longest window the operator endpoints show, and the length of the chart series. */
export const LIVE_SECONDS = 300;
/** Route figures are counted in 5-second slots (an API's in 1-second slots, for its chart). */
const ROUTE_SLOT_SECONDS = 5;
const CLOCK_TICK_MS = 50;

/** The rings of one API: its own, by the second, and one per route template. */
export interface ApiRings {
  api: SecondRing;
  routes: Map<string, SecondRing>;
}

/**
 * The router's in-memory rolling windows behind GET /anvil/overview and /anvil/api/<key>/stats: per
 * API and per route template, rings of per-second (per-5-second for routes) counters of the last
 * five minutes. Counting a request is two map lookups and a few increments; an API without a request
 * for five minutes is forgotten (by `sweep`), so idle APIs cost nothing.
 */
export class LiveFigures {
  private readonly hosts = new Map<string, Map<string, ApiRings>>();
  /**
   * Unix seconds, read from the clock every CLOCK_TICK_MS rather than per request: Date.now() cost
   * as much as the rest of the counting (and allocates). A request may land in the previous second.
   */
  private second: number;

  /** `clock`: ms since epoch; given, it is read on every call (tests step it by hand). */
  constructor(private readonly clock?: () => number) {
    this.second = Math.floor((clock ?? Date.now)() / 1000);
    if (clock === undefined) setInterval(() => (this.second = Math.floor(Date.now() / 1000)), CLOCK_TICK_MS).unref();
    setInterval(() => this.sweep(), 60_000).unref();
  }

  /** Unix seconds now. */
  now(): number {
    return this.clock === undefined ? this.second : Math.floor(this.clock() / 1000);
  }

  request(host: string, api: string, route: string, status: number, seconds: number): void {
    const now = this.now();
    const bucket = latencyBucket(seconds);
    const rings = this.rings(host, api);
    rings.api.request(now, status, bucket);
    this.route(rings, route).request(now, status, bucket);
  }

  /** Requests a thread counted itself (bus calls straight from its peers), added when reported. */
  requests(host: string, api: string, route: string, status: number, count: number, buckets: readonly number[]): void {
    const now = this.now();
    const rings = this.rings(host, api);
    rings.api.requests(now, status, count, buckets);
    this.route(rings, route).requests(now, status, count, buckets);
  }

  sandboxBreaches(host: string, api: string, count: number): void {
    this.rings(host, api).api.add(this.now(), FIELD.breaches, count);
  }

  jobFailed(host: string, api: string): void {
    this.rings(host, api).api.add(this.now(), FIELD.jobsFailed, 1);
  }

  /** The rings of an API, or undefined when it counted nothing in the last five minutes. */
  of(host: string, api: string): ApiRings | undefined {
    return this.hosts.get(host)?.get(api);
  }

  /** Forgets APIs (and routes) that counted nothing for five minutes. */
  sweep(): void {
    const stale = this.now() - LIVE_SECONDS;
    for (const [host, byKey] of this.hosts) {
      for (const [key, rings] of byKey) {
        if (rings.api.lastSecond < stale) byKey.delete(key);
        else for (const [route, ring] of rings.routes) if (ring.lastSecond < stale) rings.routes.delete(route);
      }
      if (byKey.size === 0) this.hosts.delete(host);
    }
  }

  private rings(host: string, api: string): ApiRings {
    let byKey = this.hosts.get(host);
    if (byKey === undefined) this.hosts.set(host, (byKey = new Map()));
    let rings = byKey.get(api);
    if (rings === undefined) byKey.set(api, (rings = { api: new SecondRing(1, LIVE_SECONDS), routes: new Map() }));
    return rings;
  }

  private route(rings: ApiRings, route: string): SecondRing {
    let ring = rings.routes.get(route);
    if (ring === undefined)
      rings.routes.set(route, (ring = new SecondRing(ROUTE_SLOT_SECONDS, LIVE_SECONDS / ROUTE_SLOT_SECONDS)));
    return ring;
  }
}
