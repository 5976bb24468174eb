/** The embedded queue's options, their defaults and their checks; where its file lives. */
import { join } from 'node:path';
import { Errors } from '../../shared/errors.js';

export const EMBEDDED_QUEUE_DEFAULTS = {
  busyTimeoutMs: 5000,
  pollMs: 50,
  keepCompleted: 1000,
} as const;

export interface EmbeddedQueueOptions {
  dataDir: string;
  /** The clock, epoch ms (tests inject one). Default `Date.now`. Timers stay real. */
  now?: () => number;
  /** Poll interval of the consumer. */
  pollMs?: number;
  /** Completed jobs kept per API (the newest). */
  keepCompleted?: number;
  /** Told about errors of the background work (a poll, a renewal, a finish); default: ignored. */
  onError?: (error: Error) => void;
}

export function embeddedQueueFile(dataDir: string): string {
  return join(dataDir, '.anvil', 'jobs.sqlite');
}

/** The checked options, defaults applied. */
export function checkEmbeddedOptions(options: EmbeddedQueueOptions): {
  dataDir: string;
  pollMs: number;
  keepCompleted: number;
} {
  if (
    options === null ||
    typeof options !== 'object' ||
    typeof options.dataDir !== 'string' ||
    options.dataDir === ''
  ) {
    throw Errors.jobsBadArgument('dataDir must be a non-empty path');
  }
  const pollMs = options.pollMs ?? EMBEDDED_QUEUE_DEFAULTS.pollMs;
  const keepCompleted = options.keepCompleted ?? EMBEDDED_QUEUE_DEFAULTS.keepCompleted;
  if (!Number.isSafeInteger(pollMs) || pollMs < 1)
    throw Errors.jobsBadArgument(`pollMs must be an integer >= 1, got ${pollMs}`);
  if (!Number.isSafeInteger(keepCompleted) || keepCompleted < 0)
    throw Errors.jobsBadArgument(`keepCompleted must be an integer >= 0, got ${keepCompleted}`);
  return { dataDir: options.dataDir, pollMs, keepCompleted };
}
