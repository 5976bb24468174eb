/**
 * Connections (ioredis): the Queue's with `maxRetriesPerRequest: 1` and timeouts, so `add` fails
 * fast (503) while Redis is down; the Worker's with `maxRetriesPerRequest: null` (BullMQ requires
 * it for blocking commands). `open` checks that Redis answers.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { AnvilError, Errors } from '../../shared/errors.js';
import { BULL_QUEUE_DEFAULTS } from './bullmq-options.js';

export function queueConnection(url: string): Redis {
  const redisOptions: RedisOptions = {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    autoResendUnfulfilledCommands: false,
    connectTimeout: BULL_QUEUE_DEFAULTS.connectTimeoutMs,
    commandTimeout: BULL_QUEUE_DEFAULTS.commandTimeoutMs,
  };
  return new Redis(url, redisOptions);
}

export function workerConnection(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, connectTimeout: BULL_QUEUE_DEFAULTS.connectTimeoutMs });
}

/** Turns what a Redis call throws into an AnvilError, naming the last connection error of the watched clients. */
export class RedisErrors {
  private lastError: Error | undefined;

  /** `where`: the Redis URL without its credentials. */
  constructor(private readonly where: string) {}

  watch(client: Redis): void {
    client.on('error', (error: Error) => {
      this.lastError = error;
    });
    client.on('ready', () => {
      this.lastError = undefined;
    });
  }

  async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.toAnvilError(error);
    }
  }

  toAnvilError(error: unknown): AnvilError {
    if (error instanceof AnvilError) return error;
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof Error && error.name === 'ReplyError') return Errors.jobsFailed(`Redis replied: ${message}`);
    const cause =
      this.lastError && this.lastError.message !== message
        ? `${message}; last connection error: ${this.lastError.message}`
        : message;
    return Errors.jobsUnavailable(`cannot reach Redis at ${this.where} (${cause})`);
  }
}

export async function quit(client: Redis): Promise<void> {
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
