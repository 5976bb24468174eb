/**
 * Items (client groups) by how many connections they hold, to find one holding the most in O(1)
 * amortised. Empty buckets are kept: a client that comes and goes between two counts (the usual
 * one-connection keep-alive client) moves between two Sets that already exist.
 */
export class CountBuckets<T> {
  private readonly byCount = new Map<number, Set<T>>();
  /** No item holds more than this. */
  private top = 0;

  add(item: T, count: number): void {
    let items = this.byCount.get(count);
    if (items === undefined) this.byCount.set(count, (items = new Set()));
    items.add(item);
    if (count > this.top) this.top = count;
  }

  delete(item: T, count: number): void {
    this.byCount.get(count)?.delete(item);
  }

  /** One of the items holding the most (the one listed there longest), or undefined. */
  first(): T | undefined {
    while (this.top > 0 && (this.byCount.get(this.top)?.size ?? 0) === 0) this.top--;
    return this.top === 0 ? undefined : this.byCount.get(this.top)!.values().next().value;
  }
}
