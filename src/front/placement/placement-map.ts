import { performance } from 'node:perf_hooks';

/** What this instance knows of one placed API's owner. */
export interface KnownOwner {
  owner: string;
  epoch: number;
  /** The owner's internal listener; null when its instance row is gone. */
  url: string | null;
  /** Until when (performance.now()) the lease is known valid: for this instance's own leases, measured from before the query that set it. */
  validUntil: number;
}

export type Route =
  { kind: 'here'; epoch: number } | { kind: 'owner'; owner: string; epoch: number; url: string } | { kind: 'none' };

/**
 * The owners of placed APIs as the last placement round found them (placement-loop.ts). Read on
 * the request path: map lookups and a clock read, never a query.
 */
export class PlacementMap {
  private owners = new Map<string, KnownOwner>();
  private waiters: Array<() => void> = [];

  constructor(readonly self: string) {}

  route(id: string): Route {
    const known = this.owners.get(id);
    if (known === undefined || performance.now() >= known.validUntil) return { kind: 'none' };
    if (known.owner === this.self) return { kind: 'here', epoch: known.epoch };
    return known.url === null
      ? { kind: 'none' }
      : { kind: 'owner', owner: known.owner, epoch: known.epoch, url: known.url };
  }

  /** This instance holds the API's lease now (its own clock says the lease has not run out). */
  ownsNow(id: string): boolean {
    return this.route(id).kind === 'here';
  }

  /** The owner did not answer: forget it until the next round says otherwise. */
  forget(id: string, owner: string): boolean {
    return this.owners.get(id)?.owner === owner && this.owners.delete(id);
  }

  replace(next: Map<string, KnownOwner>): void {
    this.owners = next;
    this.wake();
  }

  /** Resolves after the next placement round (successful or not), or at close. */
  nextRound(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  wake(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const resolve of waiting) resolve();
  }

  ownIds(): string[] {
    return [...this.owners].filter(([, known]) => known.owner === this.self).map(([id]) => id);
  }
}
