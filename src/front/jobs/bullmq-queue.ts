/**
 * The Redis job queue: ONE BullMQ Queue (producer and admin) and, once started, ONE Worker, on the
 * queue `anvil-jobs` under the key prefix `anvil` (`anvil:anvil-jobs:…`; tests give their own).
 *
 * The pieces, each file explaining its part: what a job is in BullMQ (bullmq-jobs.ts), the quota's
 * per-API sets (bullmq-pending-sets.ts), the worker and its leases (bullmq-worker.ts), the per-API
 * limit, global across instances (bullmq-per-api-limit.ts), retries (bullmq-retry-policy.ts),
 * counts/flush/requeue (bullmq-job-lists.ts), the connections (bullmq-connections.ts).
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { Errors } from '../../shared/errors.js';
import { queueConnection, quit, RedisErrors, workerConnection } from './bullmq-connections.js';
import { BullJobLists } from './bullmq-job-lists.js';
import { newJobOptions, readJobInfo, type AnvilQueue, type JobData } from './bullmq-jobs.js';
import { checkBullOptions, type BullQueueOptions } from './bullmq-options.js';
import { PendingJobSets } from './bullmq-pending-sets.js';
import { BullJobWorker } from './bullmq-worker.js';
import {
  checkApiFilter,
  checkConsumerOptions,
  checkJobId,
  checkNewJob,
  checkPayloadQuota,
  describeRedisUrl,
  JOB_QUEUE_DEFAULTS,
  newJobId,
} from './job-checks.js';
import type { JobInfo, JobQueue, JobQuota, NewJob, QueueConsumerOptions, QueueCounts, RunResult } from './job-queue.js';

export { BULL_QUEUE_DEFAULTS, type BullQueueOptions } from './bullmq-options.js';

export class BullJobQueue implements JobQueue {
  readonly prefix: string;
  readonly queueName: string;
  private readonly url: string;
  private readonly errors: RedisErrors;
  private readonly redis: Redis;
  private readonly pending: PendingJobSets;
  private readonly queue: AnvilQueue;
  private readonly lists: BullJobLists;
  private readonly onError: (error: Error) => void;
  private worker: BullJobWorker | undefined;
  private workerRedis: Redis | undefined;
  private stopping = false;
  private closing: Promise<void> | undefined;

  static async open(options: BullQueueOptions): Promise<BullJobQueue> {
    const { redisUrl, prefix, queueName } = checkBullOptions(options);
    const queue = new BullJobQueue(redisUrl, prefix, queueName, options.onError);
    try {
      await queue.redis.ping();
      await queue.queue.waitUntilReady();
    } catch (error) {
      queue.redis.disconnect();
      await queue.queue.close().catch(() => {});
      throw queue.errors.toAnvilError(error);
    }
    return queue;
  }

  private constructor(url: string, prefix: string, queueName: string, onError: ((error: Error) => void) | undefined) {
    this.url = url;
    this.errors = new RedisErrors(describeRedisUrl(url));
    this.prefix = prefix;
    this.queueName = queueName;
    this.onError = onError ?? (() => {});
    this.redis = queueConnection(url);
    this.pending = new PendingJobSets(
      this.redis,
      (name) => this.queue.toKey(name),
      (error) => this.report(error),
    );
    this.errors.watch(this.redis);
    this.queue = new Queue<JobData, void, string>(queueName, { connection: this.redis, prefix });
    this.queue.on('error', (error: Error) => this.report(error));
    this.lists = new BullJobLists(this.queue, this.redis, this.pending);
  }

  async add(job: NewJob, quota?: JobQuota): Promise<string> {
    checkNewJob(job);
    checkPayloadQuota(job, quota);
    this.checkOpen();
    const id = newJobId();
    const max = quota === undefined ? Number.MAX_SAFE_INTEGER : quota.maxQueued;
    const admitted = await this.errors.call(() => this.pending.admit(job.api, id, max));
    if (!admitted) throw Errors.quotaQueuedJobs(max);
    try {
      await this.errors.call(() =>
        this.queue.add(job.api, { api: job.api, payload: job.payload }, newJobOptions(id, job.delayMs)),
      );
    } catch (error) {
      await this.pending.withdraw(job.api, id);
      throw error;
    }
    return id;
  }

  start(run: (job: JobInfo) => Promise<RunResult>, options: QueueConsumerOptions): void {
    this.checkOpen();
    if (this.worker) throw Errors.jobsAlreadyStarted();
    if (typeof run !== 'function') throw Errors.jobsBadArgument('run must be a function');
    const policy = checkConsumerOptions(options);
    this.workerRedis = workerConnection(this.url);
    this.errors.watch(this.workerRedis);
    this.worker = new BullJobWorker(
      {
        queue: this.queue,
        queueName: this.queueName,
        prefix: this.prefix,
        connection: this.workerRedis,
        commands: this.redis,
        pending: this.pending,
        report: (error) => this.report(error),
      },
      run,
      policy,
    );
  }

  async get(id: string): Promise<JobInfo | null> {
    checkJobId(id);
    this.checkOpen();
    if (id === '' || id.includes(':')) return null;
    return this.errors.call(() => readJobInfo(this.queue, this.redis, id));
  }

  async counts(api?: string): Promise<QueueCounts> {
    checkApiFilter(api);
    this.checkOpen();
    return this.errors.call(() => this.lists.counts(api));
  }

  async flush(api?: string): Promise<number> {
    checkApiFilter(api);
    this.checkOpen();
    return this.errors.call(() => this.lists.flush(api));
  }

  async requeueFailed(api?: string): Promise<number> {
    checkApiFilter(api);
    this.checkOpen();
    return this.errors.call(() => this.lists.requeueFailed(api));
  }

  close(timeoutMs: number = JOB_QUEUE_DEFAULTS.closeTimeoutMs): Promise<void> {
    this.closing ??= this.shutDown(timeoutMs);
    return this.closing;
  }

  private async shutDown(timeoutMs: number): Promise<void> {
    this.stopping = true;
    if (this.worker) await this.worker.close(timeoutMs);
    await this.queue.close().catch((error: unknown) => this.report(error));
    await Promise.all([this.redis, this.workerRedis].map((client) => (client ? quit(client) : undefined)));
  }

  private report(error: unknown): void {
    if (this.stopping) return;
    this.onError(error instanceof Error ? error : new Error(String(error)));
  }

  private checkOpen(): void {
    if (this.stopping) throw Errors.jobsClosed();
  }
}
