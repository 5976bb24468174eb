/** The BullMQ queue's options, their defaults and their checks. */
import { Errors } from '../../shared/errors.js';

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

export interface BullQueueOptions {
  redisUrl: string;
  /** BullMQ key prefix, default `anvil`. */
  prefix?: string;
  /** Default `anvil-jobs`. */
  queueName?: string;
  /** Told about errors of the background work (connections, the worker); default: ignored. */
  onError?: (error: Error) => void;
}

/** The checked options, defaults applied. */
export function checkBullOptions(options: BullQueueOptions): { redisUrl: string; prefix: string; queueName: string } {
  if (
    options === null ||
    typeof options !== 'object' ||
    typeof options.redisUrl !== 'string' ||
    options.redisUrl === ''
  ) {
    throw Errors.jobsBadArgument('the Redis URL must be a non-empty string');
  }
  const prefix = options.prefix ?? BULL_QUEUE_DEFAULTS.prefix;
  const queueName = options.queueName ?? BULL_QUEUE_DEFAULTS.queueName;
  if (typeof prefix !== 'string' || prefix === '') throw Errors.jobsBadArgument('prefix must be a non-empty string');
  if (typeof queueName !== 'string' || queueName === '' || queueName.includes(':'))
    throw Errors.jobsBadArgument("queueName must be a non-empty string without ':'");
  return { redisUrl: options.redisUrl, prefix, queueName };
}
