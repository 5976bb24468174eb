import { API_KEY } from '../../deploy/api-yaml/api-key.js';
import type { PublicHost } from '../../deploy/registry/registry.js';
import { Errors } from '../../shared/errors.js';
import { AUDIT_ACTIONS, type AuditAction } from './audit-entry.js';
import type { AuditLog } from './audit-log.js';
import type { AuditQuery } from './audit-store.js';

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 500;

/**
 * `GET /anvil/audit?limit=&before=&api=&action=` on the admin host: the caller's public host's
 * entries, newest first; `next` is the `before` of the following page (null on the last).
 */
export async function auditPage(
  params: URLSearchParams,
  host: PublicHost,
  audit: AuditLog,
): Promise<{ body: unknown }> {
  const query = parseAuditQuery(params, host.name);
  if (typeof query === 'string') throw Errors.badQuery(query);
  return { body: await audit.list(query) };
}

/** The query, or what is wrong with it (naming the parameter). */
export function parseAuditQuery(params: URLSearchParams, host: string): AuditQuery | string {
  const query: AuditQuery = { host, limit: AUDIT_PAGE_DEFAULT };
  for (const name of params.keys()) {
    if (!['limit', 'before', 'api', 'action'].includes(name))
      return `unknown parameter "${name}" (limit, before, api, action)`;
  }
  const limit = params.get('limit');
  if (limit !== null) {
    if (!/^\d{1,6}$/.test(limit) || Number(limit) < 1 || Number(limit) > AUDIT_PAGE_MAX)
      return `limit: "${limit}" is not a whole number from 1 to ${AUDIT_PAGE_MAX}`;
    query.limit = Number(limit);
  }
  const before = params.get('before');
  if (before !== null) {
    if (!/^[1-9]\d{0,15}$/.test(before))
      return `before: "${before}" is not an entry number (the "next" of the previous page)`;
    query.before = Number(before);
  }
  const api = params.get('api');
  if (api !== null) {
    if (!API_KEY.test(api)) return `api: "${api}" is not an API key`;
    query.api = api;
  }
  const action = params.get('action');
  if (action !== null) {
    if (!(AUDIT_ACTIONS as readonly string[]).includes(action))
      return `action: "${action}" is not one of ${AUDIT_ACTIONS.join(', ')}`;
    query.action = action as AuditAction;
  }
  return query;
}
