import type { PublicHost } from '../../deploy/registry/registry.js';
import type { AuditAction } from './audit-entry.js';
import { keyFingerprint } from './audit-entry.js';
import type { AuditLog } from './audit-log.js';

/** What a management handler knows of its action: the instance adds who asked and from where. */
export interface ActionNote {
  action: AuditAction;
  api?: string | null;
  release?: string | null;
  /** The status answered: below 400 the action succeeded. */
  status: number;
  error?: string;
  detail?: Record<string, unknown>;
}

export type NoteAction = (note: ActionNote) => Promise<void>;

/** Records the actions of one management request: its public host, the caller's address and key fingerprint. */
export function noteActionsOf(audit: AuditLog, host: PublicHost, address: string): NoteAction {
  const fingerprint = keyFingerprint(host.key);
  return (note) =>
    audit.record({
      action: note.action,
      host: host.name,
      api: note.api ?? null,
      release: note.release ?? null,
      result: note.status < 400 ? 'ok' : 'error',
      status: note.status,
      error: note.status < 400 ? null : (note.error ?? null),
      address,
      keyFingerprint: fingerprint,
      detail: note.detail ?? null,
    });
}
