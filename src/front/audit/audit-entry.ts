import { createHash } from 'node:crypto';

/** What a management action was: the management API's and the CLI's actions that change an instance. */
export const AUDIT_ACTIONS = [
  'deploy',
  'publish',
  'disable',
  'rollback',
  'update',
  'delete',
  'host-add',
  'host-remove',
  'jobs-flush',
  'jobs-requeue-failed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Where the action came from: the management API over HTTP, or an `anvil` command on the data directory. */
export type AuditOrigin = 'http' | 'cli';

/** One management action as it is recorded (before the store numbers it). */
export interface AuditRecord {
  /** Milliseconds since the epoch. */
  timeMs: number;
  action: AuditAction;
  /** The host acted on (the public host of the management API's caller, or the host a CLI command changed). */
  host: string | null;
  api: string | null;
  release: string | null;
  /** `ok`, or `error` with the status answered and its message. */
  result: 'ok' | 'error';
  status: number | null;
  error: string | null;
  /** The caller's real address (client-address.ts); null for a CLI command. */
  address: string | null;
  /** `keyFingerprint()` of the public host key the caller sent; never the key. */
  keyFingerprint: string | null;
  origin: AuditOrigin;
  /** A few facts of the action (the change a PUT asked for, the jobs a flush removed…). */
  detail: Record<string, unknown> | null;
}

/** A stored entry: the record, numbered (newest is highest), with its time as ISO text. */
export interface AuditEntry extends Omit<AuditRecord, 'timeMs'> {
  id: number;
  time: string;
}

/** The first 12 hex digits of the key's SHA-256: tells keys apart in the audit log without revealing them. */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 12);
}
