/**
 * The Redis job queue: ONE BullMQ Queue (producer and admin) and, once started, ONE Worker, on the
 * queue `anvil-jobs` under the key prefix `anvil` (`anvil:anvil-jobs:…`; tests give their own).
 *
 * A job is a BullMQ job with our id (`j-…`, as the embedded queue), name = the API and data
 * `{ api, payload }`; kept on failure (`removeOnFail: false`), the newest 1000 completed kept IN
 * ALL (BullMQ counts per queue, not per API as the embedded queue does).
 *
 * Retry policy: `retries` and `backoffMs` come with `start()`, not with `add()`, so the worker
 * decides at failure time, exactly as the embedded queue does: jobs carry a very large `attempts`
 * and the backoff type `anvil`, whose delay the worker computes (backoffMs·2^(runs-1)); when the
 * runs are used up the processor throws an UnrecoverableError, and BullMQ fails the job with the
 * run's error as failedReason. Changing the policy thus applies to the jobs already queued too.
 *
 * Runs started (`attempts`) = attemptsMade (finished runs) + stalledCounter (runs lost with their
 * consumer) + 1 while active. A lost run counts toward the retries, as in the embedded queue.
 * `requeueFailed` resets both counters.
 *
 * Per-API limit (`perApi`): BullMQ OSS has no group limits, so the processor enforces it: when
 * the job's API already has `perApi` runs in flight IN THIS WORKER, the job goes back to delayed
 * (`job.moveToDelayed` + `DelayedError`, which counts no attempt) and the worker fetches the next
 * one, so another API's job is not stuck behind a busy API. The deferral is 100 ms times the
 * number of that API's jobs already deferred (capped at 5 s): a backlog of N jobs of one API costs
 * about 10 deferrals a second, not 10·N; and when a run of the API ends, its longest-deferred job
 * is promoted at once, so the API's slot does not idle. Such a job shows as `delayed` meanwhile. The limit holds
 * per instance: N instances on one Redis allow N·perApi runs of an API.
 *
 * Leases: `lockDuration` = leaseMs. BullMQ renews the lock of a live run (every leaseMs/2), so a
 * long run is not run twice; when the instance dies the lock runs out and a stalled check (every
 * leaseMs/2, capped at 30 s; any instance's worker does it) puts the job back to waiting: it runs
 * again (at least once). Stalls never fail a job (maxStalledCount is practically unlimited);
 * they count as runs for the retry budget.
 *
 * Per-API counts/flush/requeue list the ids of the relevant states and read each job's name in
 * one pipeline: O(jobs in those states), fine for our sizes (completed are capped at 1000).
 *
 * Quota (`add` with a JobQuota): BullMQ cannot count one API's jobs cheaply, so each API has a set of
 * the ids of its jobs not finished, `<prefix>:<queue>:anvil-pending:<api>`. A Lua script admits a
 * job (SADD) only while the set is under the quota, then the job is added (and its id removed again
 * if that fails). The id leaves the set when its run completes or fails for good (before BullMQ
 * records it: a crash in between leaves the count one short, never one too many), when it is
 * flushed, and comes back when it is requeued. Should an id stay behind anyway (Redis unreachable
 * at that moment), a full set drops the ids of jobs gone or finished, at most every 30 s per API.
 *
 * Connections (ioredis): the Queue's with `maxRetriesPerRequest: 1` and timeouts, so `add` fails
 * fast (503) while Redis is down; the Worker's with `maxRetriesPerRequest: null` (BullMQ requires
 * it for blocking commands). `open` checks that Redis answers.
 */
import { DelayedError, Job, Queue, UnrecoverableError, Worker, type JobType } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { AnvilError, Errors } from '../errors.js';
import {
  checkApiFilter,
  checkConsumerOptions,
  checkNewJob,
  checkPayloadQuota,
  describeRedisUrl,
  JOB_QUEUE_DEFAULTS,
  newJobId,
  retryDelay,
  runSafely,
} from './job-checks.js';
import type { JobInfo, JobQueue, JobQuota, JobState, NewJob, QueueConsumerOptions, QueueCounts, RunResult } from './job-queue.js';

export const BULL_QUEUE_DEFAULTS = {
  prefix: 'anvil',
  queueName: 'anvil-jobs',
  keepCompleted: 1000,
  /** A job whose API is at its perApi limit waits this, times the API's deferred jobs + 1… */
  perApiDeferMs: 100,
  /** …at most this. */
  perApiMaxDeferMs: 5000,
  connectTimeoutMs: 5000,
  commandTimeoutMs: 5000,
  /** Cap of the stalled-check interval (BullMQ's default). */
  maxStalledIntervalMs: 30_000,
} as const;

/** "Unlimited" attempts: the worker's policy (UnrecoverableError) ends a job, never this count. */
const ATTEMPTS_CAP = 2 ** 31 - 1;
const STALLS_CAP = 1_000_000;
const BACKOFF_TYPE = 'anvil';

export interface BullQueueOptions {
  redisUrl: string;
  /** BullMQ key prefix, default `anvil`. */
  prefix?: string;
  /** Default `anvil-jobs`. */
  queueName?: string;
  /** Told about errors of the background work (connections, the worker); default: ignored. */
  onError?: (error: Error) => void;
}

interface JobData {
  api: string;
  payload: string;
}

type AnvilJob = Job<JobData, void, string>;

/** BullMQ's states and lists, as ours. */
const STATE_OF: Record<string, JobState | undefined> = {
  waiting: 'waiting',
  wait: 'waiting',
  paused: 'waiting',
  prioritized: 'waiting',
  'waiting-children': 'waiting',
  delayed: 'delayed',
  active: 'active',
  completed: 'completed',
  failed: 'failed',
};
const ALL_TYPES: JobType[] = ['wait', 'paused', 'prioritized', 'waiting-children', 'delayed', 'active', 'completed', 'failed'];
const FLUSHED_TYPES: JobType[] = ['wait', 'paused', 'prioritized', 'waiting-children', 'delayed', 'completed', 'failed'];

const ABANDONED = Symbol('abandoned');

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

type ScriptedRedis = Redis & { anvilAdmitJob(pending: string, healed: string, id: string, max: string, jobPrefix: string): Promise<number> };

export class BullJobQueue implements JobQueue {
  readonly prefix: string;
  readonly queueName: string;
  private readonly url: string;
  private readonly where: string;
  private readonly redis: ScriptedRedis;
  private readonly queue: Queue<JobData, void, string>;
  private readonly onError: (error: Error) => void;
  private worker: Worker<JobData, void, string> | undefined;
  private workerRedis: Redis | undefined;
  private readonly inFlight = new Set<Promise<RunResult>>();
  private readonly perApi = new Map<string, number>();
  /** Per API: the jobs this worker deferred for perApi, and until when. */
  private readonly deferred = new Map<string, Map<string, number>>();
  private abandon: () => void = () => {};
  private readonly abandoned: Promise<typeof ABANDONED>;
  private lastError: Error | undefined;
  private stopping = false;
  private closing: Promise<void> | undefined;

  static async open(options: BullQueueOptions): Promise<BullJobQueue> {
    if (options === null || typeof options !== 'object' || typeof options.redisUrl !== 'string' || options.redisUrl === '') {
      throw Errors.jobsBadArgument('the Redis URL must be a non-empty string');
    }
    const prefix = options.prefix ?? BULL_QUEUE_DEFAULTS.prefix;
    const queueName = options.queueName ?? BULL_QUEUE_DEFAULTS.queueName;
    if (typeof prefix !== 'string' || prefix === '') throw Errors.jobsBadArgument('prefix must be a non-empty string');
    if (typeof queueName !== 'string' || queueName === '' || queueName.includes(':')) throw Errors.jobsBadArgument("queueName must be a non-empty string without ':'");
    const queue = new BullJobQueue(options.redisUrl, prefix, queueName, options.onError);
    try {
      await queue.redis.ping();
      await queue.queue.waitUntilReady();
    } catch (error) {
      queue.redis.disconnect();
      await queue.queue.close().catch(() => {});
      throw queue.redisError(error);
    }
    return queue;
  }

  private constructor(url: string, prefix: string, queueName: string, onError: ((error: Error) => void) | undefined) {
    this.url = url;
    this.where = describeRedisUrl(url);
    this.prefix = prefix;
    this.queueName = queueName;
    this.onError = onError ?? (() => {});
    this.abandoned = new Promise((resolve) => {
      this.abandon = () => resolve(ABANDONED);
    });
    const redisOptions: RedisOptions = {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
      autoResendUnfulfilledCommands: false,
      connectTimeout: BULL_QUEUE_DEFAULTS.connectTimeoutMs,
      commandTimeout: BULL_QUEUE_DEFAULTS.commandTimeoutMs,
    };
    this.redis = new Redis(url, redisOptions) as ScriptedRedis;
    this.redis.defineCommand('anvilAdmitJob', { numberOfKeys: 2, lua: ADMIT_LUA });
    this.watch(this.redis);
    this.queue = new Queue<JobData, void, string>(queueName, { connection: this.redis, prefix });
    this.queue.on('error', (error: Error) => this.report(error));
  }

  async add(job: NewJob, quota?: JobQuota): Promise<string> {
    checkNewJob(job);
    checkPayloadQuota(job, quota);
    this.checkOpen();
    const id = newJobId();
    const max = quota === undefined ? Number.MAX_SAFE_INTEGER : quota.maxQueued;
    const admitted = await this.call(() => this.redis.anvilAdmitJob(this.pendingKey(job.api), this.queue.toKey(`anvil-pending-healed:${job.api}`), id, String(max), this.queue.toKey('')));
    if (admitted !== 1) throw Errors.quotaQueuedJobs(max);
    try {
      await this.addAdmitted(job, id);
    } catch (error) {
      await this.redis.srem(this.pendingKey(job.api), id).catch(() => {});
      throw error;
    }
    return id;
  }

  private async addAdmitted(job: NewJob, id: string): Promise<void> {
    await this.call(() =>
      this.queue.add(
        job.api,
        { api: job.api, payload: job.payload },
        {
          jobId: id,
          delay: Math.ceil(job.delayMs),
          attempts: ATTEMPTS_CAP,
          backoff: { type: BACKOFF_TYPE },
          removeOnComplete: { count: BULL_QUEUE_DEFAULTS.keepCompleted },
          removeOnFail: false,
          stackTraceLimit: 1,
        },
      ),
    );
  }

  /** The set of the API's jobs not finished (see the header). */
  private pendingKey(api: string): string {
    return this.queue.toKey(`anvil-pending:${api}`);
  }

  /** The job finished for good or was removed: it no longer counts for its API's quota. */
  private async unqueue(api: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.redis.srem(this.pendingKey(api), ...ids);
    } catch (error) {
      this.report(error);
    }
  }

  start(run: (job: JobInfo) => Promise<RunResult>, options: QueueConsumerOptions): void {
    this.checkOpen();
    if (this.worker) throw Errors.jobsAlreadyStarted();
    if (typeof run !== 'function') throw Errors.jobsBadArgument('run must be a function');
    const policy = checkConsumerOptions(options);
    this.workerRedis = new Redis(this.url, { maxRetriesPerRequest: null, connectTimeout: BULL_QUEUE_DEFAULTS.connectTimeoutMs });
    this.watch(this.workerRedis);
    const worker = new Worker<JobData, void, string>(this.queueName, (job, token) => this.process(job, token, run, policy), {
      connection: this.workerRedis,
      prefix: this.prefix,
      concurrency: policy.concurrency,
      lockDuration: policy.leaseMs,
      stalledInterval: Math.min(BULL_QUEUE_DEFAULTS.maxStalledIntervalMs, Math.max(50, Math.floor(policy.leaseMs / 2))),
      maxStalledCount: STALLS_CAP,
      settings: {
        // attemptsMade here already counts the run that just failed.
        backoffStrategy: (attemptsMade, _type, _error, job) =>
          retryDelay(attemptsMade + ((job as AnvilJob | undefined)?.stalledCounter ?? 0), { retries: Number.MAX_SAFE_INTEGER, backoffMs: policy.backoffMs }) ?? 0,
      },
    });
    worker.on('error', (error: Error) => this.report(error));
    this.worker = worker;
  }

  async get(id: string): Promise<JobInfo | null> {
    if (typeof id !== 'string') throw Errors.jobsBadArgument('the job id must be a string');
    this.checkOpen();
    if (id === '' || id.includes(':')) return null;
    return this.call(async () => {
      const job = (await this.queue.getJob(id)) as AnvilJob | undefined;
      if (!job) return null;
      const state = STATE_OF[await job.getState()];
      if (!state) return null;
      let runAt = Math.min(Date.now(), job.timestamp + (job.delay ?? 0));
      if (state === 'delayed') {
        const score = await this.redis.zscore(this.queue.toKey('delayed'), id);
        runAt = score === null ? job.timestamp + (job.delay ?? 0) : Math.floor(Number(score) / 0x1000);
      } else if (state !== 'waiting') {
        runAt = job.processedOn ?? job.timestamp;
      }
      return this.info(job, state, runAt);
    });
  }

  async counts(api?: string): Promise<QueueCounts> {
    checkApiFilter(api);
    this.checkOpen();
    return this.call(async () => {
      const counts: QueueCounts = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0 };
      if (api === undefined) {
        const raw = await this.queue.getJobCounts(...ALL_TYPES);
        for (const [type, n] of Object.entries(raw)) {
          const state = STATE_OF[type];
          if (state) counts[state] += n;
        }
        return counts;
      }
      for (const type of ALL_TYPES) {
        const state = STATE_OF[type];
        if (state) counts[state] += (await this.idsOf(type, api)).length;
      }
      return counts;
    });
  }

  async flush(api?: string): Promise<number> {
    checkApiFilter(api);
    this.checkOpen();
    return this.call(async () => {
      let removed = 0;
      for (const type of FLUSHED_TYPES) {
        const jobs = await this.jobsOf(type, api);
        // remove() gives 0 for a job that became active meanwhile (locked): it is left alone.
        for (let i = 0; i < jobs.length; i += 100) {
          const chunk = jobs.slice(i, i + 100);
          const results = await Promise.all(chunk.map(([id]) => this.queue.remove(id)));
          removed += results.reduce((sum, n) => sum + n, 0);
          const gone = new Map<string, string[]>();
          chunk.forEach(([id, name], at) => {
            if (results[at] === 1 && name !== null) gone.set(name, [...(gone.get(name) ?? []), id]);
          });
          for (const [name, ids] of gone) await this.unqueue(name, ids);
        }
      }
      return removed;
    });
  }

  async requeueFailed(api?: string): Promise<number> {
    checkApiFilter(api);
    this.checkOpen();
    return this.call(async () => {
      let requeued = 0;
      for (const id of await this.idsOf('failed', api)) {
        const job = await this.queue.getJob(id);
        if (!job) continue;
        // Runs lost with a consumer count as attempts: reset them too (BullMQ's retry does not).
        await this.redis.hdel(this.queue.toKey(id), 'stc');
        try {
          await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
          // Requeued by an operator: it counts again, even past the API's quota.
          await this.redis.sadd(this.pendingKey((job.data as JobData).api), id);
          requeued += 1;
        } catch {
          // no longer failed (requeued or removed meanwhile)
        }
      }
      return requeued;
    });
  }

  close(timeoutMs: number = JOB_QUEUE_DEFAULTS.closeTimeoutMs): Promise<void> {
    this.closing ??= this.shutDown(timeoutMs);
    return this.closing;
  }

  private async process(job: AnvilJob, token: string | undefined, run: (job: JobInfo) => Promise<RunResult>, policy: QueueConsumerOptions): Promise<void> {
    const { api } = job.data;
    if ((this.perApi.get(api) ?? 0) >= policy.perApi) {
      await job.moveToDelayed(this.deferUntil(api, String(job.id)), token);
      throw new DelayedError(`deferred: ${policy.perApi} runs of ${api} in flight`);
    }
    const deferred = this.deferred.get(api);
    if (deferred?.delete(String(job.id)) && deferred.size === 0) this.deferred.delete(api);
    this.perApi.set(api, (this.perApi.get(api) ?? 0) + 1);
    const info = this.info(job, 'active', job.processedOn ?? Date.now());
    const outcome = runSafely(run, info);
    this.inFlight.add(outcome);
    let result: RunResult | typeof ABANDONED;
    try {
      result = await Promise.race([outcome, this.abandoned]);
    } finally {
      this.inFlight.delete(outcome);
      const left = (this.perApi.get(api) ?? 1) - 1;
      if (left > 0) this.perApi.set(api, left);
      else this.perApi.delete(api);
      if (result! !== ABANDONED) void this.promoteDeferred(api);
    }
    // close() gave up on this run: leave the job active without renewing its lock, as a crash
    // would. Its lock runs out and it runs again (a DelayedError makes BullMQ leave it as it is).
    if (result === ABANDONED) throw new DelayedError('abandoned by close()');
    if (result.ok) {
      await this.unqueue(api, [info.id]);
      return;
    }
    if (retryDelay(info.attempts, policy) === null) {
      await this.unqueue(api, [info.id]);
      throw new UnrecoverableError(result.error);
    }
    throw new Error(result.error);
  }

  /** A run of `api` ended: its longest-deferred job need not wait out its delay. */
  private async promoteDeferred(api: string): Promise<void> {
    const jobs = this.deferred.get(api);
    if (!jobs || this.stopping) return;
    let next: string | undefined;
    let first = Infinity;
    for (const [id, until] of jobs) {
      if (until < first) [next, first] = [id, until];
    }
    if (next === undefined) return;
    jobs.delete(next);
    if (jobs.size === 0) this.deferred.delete(api);
    try {
      await (await this.queue.getJob(next))?.promote();
    } catch {
      // no longer delayed (already back, flushed): nothing to do
    }
  }

  /** When a job deferred for its API's limit is due again (see the header). */
  private deferUntil(api: string, id: string): number {
    const now = Date.now();
    let jobs = this.deferred.get(api);
    if (!jobs) this.deferred.set(api, (jobs = new Map()));
    jobs.delete(id);
    // Forget deferrals long past (the job was flushed, or another instance took it).
    for (const [other, until] of jobs) if (until < now - 1000) jobs.delete(other);
    const until = now + Math.min(BULL_QUEUE_DEFAULTS.perApiMaxDeferMs, BULL_QUEUE_DEFAULTS.perApiDeferMs * (jobs.size + 1));
    jobs.set(id, until);
    return until;
  }

  private info(job: AnvilJob, state: JobState, runAt: number): JobInfo {
    return {
      id: String(job.id),
      api: job.data.api,
      state,
      payload: job.data.payload,
      attempts: (job.attemptsMade ?? 0) + (job.stalledCounter ?? 0) + (state === 'active' ? 1 : 0),
      error: job.failedReason ? job.failedReason : null,
      createdAt: job.timestamp,
      runAt,
      finishedAt: job.finishedOn ?? null,
    };
  }

  /** The ids of the jobs of one BullMQ list/set, of one API if given (by the job name). */
  private async idsOf(type: JobType, api: string | undefined): Promise<string[]> {
    if (api === undefined) return this.queue.getRanges([type], 0, -1, true);
    return (await this.jobsOf(type, api)).map(([id]) => id);
  }

  /** [id, name (the API; null when unreadable)] of the jobs of one BullMQ list/set, of one API if given. */
  private async jobsOf(type: JobType, api: string | undefined): Promise<Array<[string, string | null]>> {
    const ids = await this.queue.getRanges([type], 0, -1, true);
    const kept: Array<[string, string | null]> = [];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const pipeline = this.redis.pipeline();
      for (const id of chunk) pipeline.hget(this.queue.toKey(id), 'name');
      const names = (await pipeline.exec()) ?? [];
      chunk.forEach((id, at) => {
        const [error, name] = names[at] ?? [null, null];
        const known = !error && typeof name === 'string' ? name : null;
        if (api === undefined || known === api) kept.push([id, known]);
      });
    }
    return kept;
  }

  private async shutDown(timeoutMs: number): Promise<void> {
    this.stopping = true;
    const worker = this.worker;
    if (worker) {
      // Stops fetching at once, then waits for the processors (which wait for the runs).
      const closingWorker = worker.close();
      if (this.inFlight.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, Math.max(0, timeoutMs));
        });
        await Promise.race([Promise.all([...this.inFlight]), timeout]);
        clearTimeout(timer);
      }
      this.abandon();
      await closingWorker.catch((error: unknown) => this.report(error));
    }
    await this.queue.close().catch((error: unknown) => this.report(error));
    await Promise.all([this.redis, this.workerRedis].map((client) => (client ? quit(client) : undefined)));
  }

  private watch(client: Redis): void {
    client.on('error', (error: Error) => {
      this.lastError = error;
    });
    client.on('ready', () => {
      this.lastError = undefined;
    });
  }

  private report(error: unknown): void {
    if (this.stopping) return;
    this.onError(error instanceof Error ? error : new Error(String(error)));
  }

  private checkOpen(): void {
    if (this.stopping) throw Errors.jobsClosed();
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.redisError(error);
    }
  }

  private redisError(error: unknown): AnvilError {
    if (error instanceof AnvilError) return error;
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof Error && error.name === 'ReplyError') return Errors.jobsFailed(`Redis replied: ${message}`);
    const cause = this.lastError && this.lastError.message !== message ? `${message}; last connection error: ${this.lastError.message}` : message;
    return Errors.jobsUnavailable(`cannot reach Redis at ${this.where} (${cause})`);
  }
}

async function quit(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // fall through: drop the connection
    }
  }
  client.disconnect();
}
