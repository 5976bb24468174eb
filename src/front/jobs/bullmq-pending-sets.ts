/**
 * Quota (`add` with a JobQuota): BullMQ cannot count one API's jobs cheaply, so each API has a set of
 * the ids of its jobs not finished, `<prefix>:<queue>:anvil-pending:<api>`. A Lua script admits a
 * job (SADD) only while the set is under the quota, then the job is added (and its id removed again
 * if that fails). The id leaves the set when its run completes or fails for good (before BullMQ
 * records it: a crash in between leaves the count one short, never one too many), when it is
 * flushed, and comes back when it is requeued. Should an id stay behind anyway (Redis unreachable
 * at that moment), a full set drops the ids of jobs gone or finished, at most every 30 s per API.
 */
import type { Redis } from 'ioredis';

/** A full pending set drops the ids of finished or vanished jobs at most this often per API. */
const HEAL_EVERY_MS = 30_000;

/** A pending id whose job does not exist is dropped only once it is this old: its add may be under way. */
const VANISHED_AFTER_MS = 60_000;

// KEYS: the API's pending set, its heal marker. ARGV: the job id, the quota, the jobs' key prefix.
// Job ids are j-<creation ms, 9 base-36 digits>-<hex>.
const ADMIT_LUA = `
local max = tonumber(ARGV[2])
if redis.call('SCARD', KEYS[1]) >= max and redis.call('SET', KEYS[2], '1', 'NX', 'PX', ${HEAL_EVERY_MS}) then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
    local job = ARGV[3] .. member
    local created = tonumber(string.sub(member, 3, 11), 36) or 0
    if redis.call('HEXISTS', job, 'finishedOn') == 1 or (redis.call('EXISTS', job) == 0 and created < now - ${VANISHED_AFTER_MS}) then
      redis.call('SREM', KEYS[1], member)
    end
  end
end
if redis.call('SCARD', KEYS[1]) >= max then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
`;

type ScriptedRedis = Redis & {
  anvilAdmitJob(pending: string, healed: string, id: string, max: string, jobPrefix: string): Promise<number>;
};

/** The per-API sets of the jobs not finished (see the header). */
export class PendingJobSets {
  private readonly redis: ScriptedRedis;

  /** Defines the admit script on `redis`; `toKey` names a key of the queue (BullMQ's `Queue.toKey`). */
  constructor(
    redis: Redis,
    private readonly toKey: (name: string) => string,
    private readonly report: (error: unknown) => void,
  ) {
    this.redis = redis as ScriptedRedis;
    this.redis.defineCommand('anvilAdmitJob', { numberOfKeys: 2, lua: ADMIT_LUA });
  }

  /** Adds the id to its API's set if the set holds fewer than `max`; false when it is full. */
  async admit(api: string, id: string, max: number): Promise<boolean> {
    return (
      (await this.redis.anvilAdmitJob(
        this.key(api),
        this.toKey(`anvil-pending-healed:${api}`),
        id,
        String(max),
        this.toKey(''),
      )) === 1
    );
  }

  /** Takes back an admission whose job could not be added. */
  async withdraw(api: string, id: string): Promise<void> {
    await this.redis.srem(this.key(api), id).catch(() => {});
  }

  /** The jobs finished for good or were removed: they no longer count for their API's quota. */
  async release(api: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.redis.srem(this.key(api), ...ids);
    } catch (error) {
      this.report(error);
    }
  }

  /** A requeued job counts again, even past its API's quota. */
  async restore(api: string, id: string): Promise<void> {
    await this.redis.sadd(this.key(api), id);
  }

  private key(api: string): string {
    return this.toKey(`anvil-pending:${api}`);
  }
}
