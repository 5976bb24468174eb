import type { ServerResponse } from 'node:http';
import type { FollowLimits } from './follow-limits.js';
import type { LogFilter } from './log-filter.js';
import { LogTail } from './log-tail.js';
import { SseSubscriber } from './sse-subscriber.js';

interface Followed {
  tail: LogTail;
  subscribers: Set<SseSubscriber>;
}

/**
 * The live request logs being followed, one tail per API folder shared by its clients; the tail
 * stops with the last client.
 */
export class LogFollowers {
  private readonly followed = new Map<string, Followed>();

  constructor(
    private readonly limits: FollowLimits,
    /** A client dropped for reading too slowly. */
    private readonly onDropped: (dir: string) => void = () => {},
  ) {}

  /** Starts streaming `dir`'s new lines to `res`; false (nothing written) when the API has its most followers already. */
  async follow(dir: string, res: ServerResponse, filter: LogFilter): Promise<boolean> {
    let entry = this.followed.get(dir);
    if (entry !== undefined && entry.subscribers.size >= this.limits.perApi) return false;
    if (entry === undefined) {
      const subscribers = new Set<SseSubscriber>();
      const tail = new LogTail(dir, (line) => {
        for (const subscriber of subscribers) subscriber.send(line);
      });
      entry = { tail, subscribers };
      this.followed.set(dir, entry);
      await tail.start();
    }
    const followed = entry;
    if (res.destroyed) {
      // The client left while the tail started.
      this.release(dir, followed);
      return true;
    }
    const subscriber = new SseSubscriber(res, filter, this.limits.bufferedBytes, (dropped) => {
      followed.subscribers.delete(subscriber);
      if (dropped) this.onDropped(dir);
      this.release(dir, followed);
    });
    followed.subscribers.add(subscriber);
    return true;
  }

  /** The tail stops with its last client. */
  private release(dir: string, followed: Followed): void {
    if (followed.subscribers.size > 0 || this.followed.get(dir) !== followed) return;
    followed.tail.stop();
    this.followed.delete(dir);
  }

  /** Clients following now, in all. */
  get count(): number {
    let n = 0;
    for (const entry of this.followed.values()) n += entry.subscribers.size;
    return n;
  }

  /** Ends every stream: a draining instance waits for no follower. */
  close(): void {
    for (const entry of [...this.followed.values()]) for (const subscriber of [...entry.subscribers]) subscriber.end();
    for (const entry of this.followed.values()) entry.tail.stop();
    this.followed.clear();
  }
}
