import type { AuditAction, AuditEntry, AuditRecord } from './audit-entry.js';

/** Which entries a listing wants: one host's (and the instance-wide ones), newest first, older than the `before` cursor. */
export interface AuditQuery {
  host: string;
  api?: string;
  action?: AuditAction;
  /** Only entries numbered below this (the previous page's `next`). */
  before?: number;
  limit: number;
}

export interface AuditPage {
  entries: AuditEntry[];
  /** The `before` of the next (older) page, or null when there is none. */
  next: number | null;
}

/**
 * How long entries are kept: younger than `days`, and the newest `rows` of each public host, the
 * instance-wide entries (no host) counted apart as one more: a host that floods the log with
 * actions removes only its own oldest entries.
 */
export interface AuditRetention {
  days: number;
  /** Per host (and for the instance-wide entries). */
  rows: number;
}

export const DEFAULT_AUDIT_RETENTION: AuditRetention = { days: 90, rows: 100_000 };

/**
 * Where audit entries live: append-only (entries are never changed; retention removes the oldest).
 * Asynchronous so that a store in a server (Postgres, in cluster mode) can stand in for the
 * embedded one.
 */
export interface AuditStore {
  /** Stores the record; resolves to its number. */
  append(record: AuditRecord): Promise<number>;
  list(query: AuditQuery): Promise<AuditPage>;
  /** Entries numbered above `afterId` that came from `origin`, oldest first (at most `limit`). */
  since(afterId: number, origin: AuditRecord['origin'], limit: number): Promise<AuditEntry[]>;
  /** The highest number stored (0 when empty). */
  lastId(): Promise<number>;
  /** Removes what retention no longer keeps; resolves to the number of entries removed. */
  prune(retention: AuditRetention, nowMs: number): Promise<number>;
  /**
   * Removes the oldest entries of `host` (null: the instance-wide ones) beyond its newest `rows`;
   * the entries of other hosts are not touched. Cheap enough to follow every append.
   */
  trim(host: string | null, rows: number): Promise<number>;
  close(): void;
}
