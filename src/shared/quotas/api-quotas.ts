/**
 * What one API may keep in the things every API of the instance shares: the job queue, the
 * key-value store, its log folder, its files and its SQLite database. The instance sets a ceiling for each (`anvil start
 * --max-…`), which is also the API's default; an api.yaml may ask for less under `limits:`, never
 * for more.
 */
import type { QuotaLimits } from '../api-model/types.js';

export interface ApiQuotas {
  /** Largest job payload (the frozen memory and message of ForTheWorker), bytes. */
  jobPayloadBytes: number;
  /** Jobs of the API queued and not finished yet (waiting, delayed or running). */
  queuedJobs: number;
  /** Payload bytes of the API's jobs queued and not finished (the embedded queue; BullMQ: queuedJobs × jobPayloadBytes). */
  queuedJobBytes: number;
  /** Keys and values the API keeps in the key-value store, UTF-8 bytes. */
  kvBytes: number;
  /** Size at which the API's log file of the day is closed and the next one (`.1`, `.2`…) opened, bytes. */
  logFileBytes: number;
  /** All the API's log files together, bytes: the oldest go first. */
  logBytes: number;
  /** Log files older than this many days go. */
  logDays: number;
  /** Disk the API's files take (SaveFile, CachedFileSet): each file and folder counted in 4 KiB blocks. */
  filesBytes: number;
  /** Header lines of one response (each `set-cookie` value is one), as the router would write them. */
  responseHeaders: number;
  /** Bytes of one response's header lines (`name: value` and CRLF each): the router holds them for a client that does not read. */
  responseHeaderBytes: number;
  /**
   * Disk the API's SQLite database takes, its file and its write-ahead log together: the file holds
   * at most half of it in pages (`max_page_count`), the other half is room for the log of a
   * transaction that rewrites every page (database-quota.ts).
   */
  databaseBytes: number;
}

const KIB = 1024;
const MIB = 1024 * KIB;

/** The instance's ceilings when `anvil start` is given none. */
export const DEFAULT_QUOTAS: ApiQuotas = {
  jobPayloadBytes: 256 * KIB,
  queuedJobs: 10_000,
  queuedJobBytes: 64 * MIB,
  kvBytes: 64 * MIB,
  logFileBytes: 64 * MIB,
  logBytes: 256 * MIB,
  logDays: 14,
  filesBytes: 256 * MIB,
  // As common proxies: HAProxy and Envoy allow about 100 header lines, and a head of 64 KiB or less.
  responseHeaders: 100,
  responseHeaderBytes: 64 * KIB,
  databaseBytes: 256 * MIB,
};

/** The API's quotas: what its api.yaml asks for (`limits:`), each capped by the instance's ceiling. */
export function effectiveQuotas(requested: Partial<QuotaLimits>, ceilings: ApiQuotas): ApiQuotas {
  const pick = (asked: number | undefined, scale: number, ceiling: number) =>
    asked === undefined ? ceiling : Math.min(asked * scale, ceiling);
  return {
    jobPayloadBytes: pick(requested.jobPayloadKb, KIB, ceilings.jobPayloadBytes),
    queuedJobs: pick(requested.queuedJobs, 1, ceilings.queuedJobs),
    queuedJobBytes: pick(requested.queuedJobsKb, KIB, ceilings.queuedJobBytes),
    kvBytes: pick(requested.kvKb, KIB, ceilings.kvBytes),
    logFileBytes: pick(requested.logFileKb, KIB, ceilings.logFileBytes),
    logBytes: pick(requested.logKb, KIB, ceilings.logBytes),
    logDays: pick(requested.logDays, 1, ceilings.logDays),
    filesBytes: pick(requested.filesKb, KIB, ceilings.filesBytes),
    // The instance's alone: they bound the router's memory, which api.yaml has no say in.
    responseHeaders: ceilings.responseHeaders,
    responseHeaderBytes: ceilings.responseHeaderBytes,
    databaseBytes: pick(requested.databaseKb, KIB, ceilings.databaseBytes),
  };
}
