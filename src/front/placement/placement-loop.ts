import { performance } from 'node:perf_hooks';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { KnownOwner, PlacementMap } from './placement-map.js';
import type { PgPlacementStore, PlacementRow } from './pg-placement-store.js';
import { placementId } from './placed-releases.js';
import { rendezvousOwner } from './rendezvous.js';

export interface PlacedApi {
  host: string;
  key: string;
}

export interface LoopOptions {
  self: string;
  internalUrl: string;
  leaseMs: number;
  /** The placed APIs this instance serves (active, keeping local state). */
  wanted(): PlacedApi[];
  /** This instance no longer owns the API (`placementId`): what runs it here must stop taking work. */
  lost(id: string): void;
}

/** Rounds per lease: an owner renews several times per lease, and a lapse is noticed within an eighth of one. */
const ROUNDS_PER_LEASE = 8;

/**
 * The placement round, every lease/8: heartbeat, renew this instance's leases (one statement),
 * read the instances and the placements, then claim each wanted API that has no valid lease and
 * whose rendezvous owner among the live instances is this one. Ownership is sticky: an owner keeps
 * its APIs while it renews, so a joining instance moves nothing (and no data is left behind).
 */
export class PlacementLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;
  private failing = false;
  private lastRoundAt = -Infinity;
  /** APIs whose loss was told (options.lost), until this instance owns them again. */
  private readonly lossTold = new Set<string>();
  readonly intervalMs: number;

  constructor(
    private readonly store: PgPlacementStore,
    private readonly map: PlacementMap,
    private readonly options: LoopOptions,
    private readonly log: InstanceLog,
  ) {
    this.intervalMs = Math.min(2_000, Math.max(50, Math.floor(options.leaseMs / ROUNDS_PER_LEASE)));
  }

  start(): Promise<void> {
    return this.runNow();
  }

  /** An owner did not answer: a round soon, but not more than two per interval however many requests fail. */
  soon(): void {
    if (this.running === null && performance.now() - this.lastRoundAt >= this.intervalMs / 2) void this.runNow();
  }

  /** Runs a round now (or returns the one running). */
  runNow(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running !== null) return this.running;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.lastRoundAt = performance.now();
    this.running = this.round()
      .then(
        () => {
          if (this.failing) this.log.info({}, 'placement: the control plane answers again; leases are renewed');
          this.failing = false;
        },
        (error: unknown) => {
          if (!this.failing)
            this.log.warn(
              { err: error },
              'placement: the control plane cannot be reached; placed APIs stop being served here when their leases run out',
            );
          this.failing = true;
          // Leases that ran out by this instance's clock: lost as far as its threads go.
          for (const id of this.map.ownIds()) if (!this.map.ownsNow(id)) this.lose(id);
          this.map.wake();
        },
      )
      .finally(() => {
        this.running = null;
        if (!this.closed) {
          this.timer = setTimeout(() => void this.runNow(), this.intervalMs);
          this.timer.unref();
        }
      });
    return this.running;
  }

  private async round(): Promise<void> {
    const { self, leaseMs } = this.options;
    await this.store.heartbeat(self, this.options.internalUrl);
    const renewSentAt = performance.now();
    const renewed = new Map((await this.store.renew(self, leaseMs)).map((r) => [placementId(r.host, r.key), r]));
    const [instances, rows] = await Promise.all([this.store.instances(), this.store.placements()]);
    const readAt = performance.now();
    const urls = new Map(instances.map((i) => [i.id, i.internalUrl]));
    const ages = new Map(instances.map((i) => [i.id, i.ageMs]));
    const live = instances.filter((i) => i.ageMs < leaseMs || i.id === self).map((i) => i.id);
    if (!live.includes(self)) live.push(self);
    // An owner that missed a few heartbeats is most likely dead: its requests wait for the next
    // owner rather than be sent where nothing answers.
    const answering = (id: string) => (ages.get(id) ?? Infinity) < Math.min(leaseMs, 3 * this.intervalMs + 1_000);

    const next = new Map<string, KnownOwner>();
    const lapsed = new Map<string, PlacementRow>();
    for (const row of rows) {
      const id = placementId(row.host, row.key);
      const mine = renewed.get(id);
      if (mine !== undefined)
        next.set(id, {
          owner: self,
          epoch: mine.epoch,
          url: this.options.internalUrl,
          validUntil: renewSentAt + leaseMs,
        });
      else if (row.owner !== self && row.leftMs > 0)
        next.set(id, {
          owner: row.owner,
          epoch: row.epoch,
          url: answering(row.owner) ? (urls.get(row.owner) ?? null) : null,
          validUntil: readAt + row.leftMs,
        });
      else lapsed.set(id, row);
    }
    for (const api of this.options.wanted()) {
      const id = placementId(api.host, api.key);
      if (next.has(id)) continue;
      // The owner that let its lease lapse is dead or cut off: not a candidate while others are.
      const lapsedOwner = lapsed.get(id)?.owner;
      const others = live.filter((i) => i !== lapsedOwner);
      if (rendezvousOwner(id, others.length > 0 ? others : live) !== self) continue;
      const sentAt = performance.now();
      const epoch = await this.store.claim(api.host, api.key, self, leaseMs);
      if (epoch === null) continue;
      next.set(id, { owner: self, epoch, url: this.options.internalUrl, validUntil: sentAt + leaseMs });
      this.log.info(
        { host: api.host, api: api.key, epoch, previousOwner: lapsedOwner ?? null },
        'placement: this instance now owns the API',
      );
    }
    const lost = this.map.ownIds().filter((id) => next.get(id)?.owner !== self);
    this.map.replace(next);
    for (const [id, known] of next) if (known.owner === self) this.lossTold.delete(id);
    for (const id of lost) this.lose(id);
  }

  /** Told once per loss, whether a round saw it or the lease ran out while Postgres could not be reached. */
  private lose(id: string): void {
    if (this.lossTold.has(id)) return;
    this.lossTold.add(id);
    this.log.warn(
      { api: id },
      'placement: this instance no longer owns the API (its lease ran out); it stops serving it',
    );
    this.options.lost(id);
  }

  /** Stops the rounds; with `leave`, gives the leases back so that the others take the APIs at once. */
  async close(leave: boolean): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    this.map.replace(new Map());
    if (leave)
      await this.store
        .leave(this.options.self)
        .catch((error: unknown) =>
          this.log.warn({ err: error }, 'placement: the leases could not be given back; they lapse by themselves'),
        );
  }
}
