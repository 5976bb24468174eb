/**
 * Per-API limit (`perApi`), global across every instance on the same Redis and queue: BullMQ OSS
 * has no group limits, so the processor takes one of the API's `perApi` run slots before the run.
 *
 * Slots: a sorted set per API, `<prefix>:<queue>:anvil-runs:<api>`, job id → when its slot lapses
 * (Redis's clock). A slot lasts `leaseMs` and is renewed every leaseMs/3 while the run lives, so a
 * dead instance's slot frees itself within one lease (its job then runs again anyway, with the same
 * id, which keeps the slot it had). A run that ends gives its slot back at once.
 *
 * An API at its limit: the job goes back to delayed (`job.moveToDelayed` + `DelayedError`, which
 * counts no attempt) and the worker fetches the next one, so another API's job is not stuck behind
 * a busy API. The deferral is 100 ms times the number of that API's jobs already deferred (capped at
 * 5 s), kept in `anvil-deferred:<api>` beside the slots: a backlog of N jobs of one API costs about
 * 10 deferrals a second, not 10·N. When a run ends, on whichever instance, the API's
 * longest-deferred job is promoted at once, so the slot does not idle. Taking a slot and deferring
 * are one Lua script, so two instances never take the last slot together.
 *
 * Redis unreachable when a slot is to be taken: the job is left as a crash would leave it (active,
 * its lock no longer renewed) and runs again after its lease; unreachable when a slot is renewed or
 * given back: the slot lapses by itself within a lease.
 */
import { DelayedError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { AnvilJob, AnvilQueue } from './bullmq-jobs.js';
import { BULL_QUEUE_DEFAULTS } from './bullmq-options.js';

const NOW_LUA = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`;

// KEYS: the API's slots, its deferred jobs. ARGV: job id, perApi, leaseMs, deferMs, maxDeferMs.
// Returns -1 when the slot is taken, else the ms the job is deferred for.
const TAKE_LUA = `${NOW_LUA}
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 1000)
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], lease)
  return -1
end
local wait = math.min(tonumber(ARGV[5]), tonumber(ARGV[4]) * (redis.call('ZCARD', KEYS[2]) + 1))
redis.call('ZADD', KEYS[2], now + wait, ARGV[1])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[5]) + 1000)
return wait
`;

// KEYS: the API's slots. ARGV: job id, leaseMs. A live run counts even if its slot lapsed meanwhile.
const RENEW_LUA = `${NOW_LUA}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
`;

// KEYS: the API's slots, its deferred jobs. ARGV: job id. Returns the longest-deferred job's id, or false.
const GIVE_BACK_LUA = `
redis.call('ZREM', KEYS[1], ARGV[1])
local next = redis.call('ZPOPMIN', KEYS[2])
return next[1] or false
`;

type ScriptedRedis = Redis & {
  anvilTakeRunSlot(
    slots: string,
    deferred: string,
    id: string,
    perApi: string,
    leaseMs: string,
    deferMs: string,
    maxDeferMs: string,
  ): Promise<number>;
  anvilRenewRunSlot(slots: string, id: string, leaseMs: string): Promise<number>;
  anvilGiveBackRunSlot(slots: string, deferred: string, id: string): Promise<string | null>;
};

export class PerApiLimit {
  private readonly redis: ScriptedRedis;
  /** Renewal timers of the slots this worker holds, by job id. */
  private readonly held = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  /** Defines the scripts on `redis` (the queue's connection). */
  constructor(
    private readonly queue: AnvilQueue,
    redis: Redis,
    private readonly perApi: number,
    private readonly leaseMs: number,
    private readonly report: (error: unknown) => void,
  ) {
    this.redis = redis as ScriptedRedis;
    this.redis.defineCommand('anvilTakeRunSlot', { numberOfKeys: 2, lua: TAKE_LUA });
    this.redis.defineCommand('anvilRenewRunSlot', { numberOfKeys: 1, lua: RENEW_LUA });
    this.redis.defineCommand('anvilGiveBackRunSlot', { numberOfKeys: 2, lua: GIVE_BACK_LUA });
  }

  /**
   * Takes one of the job's API's slots, or moves the job back to delayed and throws the
   * DelayedError that tells BullMQ so (see the header).
   */
  async enter(job: AnvilJob, token: string | undefined): Promise<void> {
    const { api } = job.data;
    const id = String(job.id);
    let deferMs: number;
    try {
      const { perApiDeferMs, perApiMaxDeferMs } = BULL_QUEUE_DEFAULTS;
      deferMs = await this.redis.anvilTakeRunSlot(
        this.slots(api),
        this.deferred(api),
        id,
        String(this.perApi),
        String(this.leaseMs),
        String(perApiDeferMs),
        String(perApiMaxDeferMs),
      );
    } catch (error) {
      this.report(error);
      throw new DelayedError(`no run slot of ${api}: Redis cannot be reached; the job runs again after its lease`);
    }
    if (deferMs >= 0) {
      await job.moveToDelayed(Date.now() + deferMs, token);
      throw new DelayedError(`deferred: ${this.perApi} runs of ${api} in flight`);
    }
    const renew = setInterval(
      () => {
        this.redis
          .anvilRenewRunSlot(this.slots(api), id, String(this.leaseMs))
          .catch((error: unknown) => this.report(error));
      },
      Math.max(20, Math.floor(this.leaseMs / 3)),
    );
    renew.unref();
    this.held.set(id, renew);
  }

  /**
   * The run of `job` ended. `giveBack`: its slot is free at once and the API's longest-deferred job
   * need not wait out its delay; false (a run abandoned by close(), left as a crash would): the slot
   * lapses after its lease, when the job may run again.
   */
  leave(job: AnvilJob, giveBack: boolean): void {
    const id = String(job.id);
    clearInterval(this.held.get(id));
    this.held.delete(id);
    if (giveBack) void this.giveBack(job.data.api, id);
  }

  /** The worker is closing: deferred jobs are no longer promoted. */
  stop(): void {
    this.stopped = true;
  }

  private async giveBack(api: string, id: string): Promise<void> {
    let next: string | null;
    try {
      next = await this.redis.anvilGiveBackRunSlot(this.slots(api), this.deferred(api), id);
    } catch (error) {
      this.report(error);
      return;
    }
    if (next === null || this.stopped) return;
    try {
      await (await this.queue.getJob(next))?.promote();
    } catch {
      // no longer delayed (already back, flushed, taken by another instance): nothing to do
    }
  }

  private slots(api: string): string {
    return this.queue.toKey(`anvil-runs:${api}`);
  }

  private deferred(api: string): string {
    return this.queue.toKey(`anvil-deferred:${api}`);
  }
}
