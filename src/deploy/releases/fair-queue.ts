/**
 * Waiting work of many tenants, taken one item at a time fairly between them: each tenant's items
 * in the order they came, the tenants in turn. An item is given a round: a tenant's first waiting
 * item the round under way, each next one the round after its previous one; the smallest round is
 * taken first, the earliest comer within a round. So a tenant with thirty items waiting and one
 * that comes with one alternate from the round under way: the newcomer waits for at most one item
 * of each other tenant, not for all thirty.
 */
export class FairQueue<T> {
  private readonly tenants = new Map<
    string,
    { items: Array<{ item: T; round: number; seq: number }>; lastRound: number }
  >();
  /** The round of the item last taken. */
  private round = 0;
  private seq = 0;

  push(tenant: string, item: T): void {
    let queue = this.tenants.get(tenant);
    if (queue === undefined) this.tenants.set(tenant, (queue = { items: [], lastRound: -1 }));
    const round = Math.max(this.round, queue.lastRound + 1);
    queue.lastRound = round;
    queue.items.push({ item, round, seq: this.seq++ });
  }

  /** The next item, or undefined when none waits. */
  shift(): T | undefined {
    let best: { tenant: string; round: number; seq: number } | null = null;
    // One entry per tenant with items waiting: a few public hosts, not their items.
    for (const [tenant, queue] of this.tenants) {
      const head = queue.items[0]!;
      if (best === null || head.round < best.round || (head.round === best.round && head.seq < best.seq))
        best = { tenant, round: head.round, seq: head.seq };
    }
    if (best === null) return undefined;
    const queue = this.tenants.get(best.tenant)!;
    const { item, round } = queue.items.shift()!;
    if (queue.items.length === 0) this.tenants.delete(best.tenant);
    this.round = round;
    return item;
  }
}
