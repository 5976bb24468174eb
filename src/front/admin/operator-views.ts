import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { handleAuditPage } from '../audit/audit-endpoint.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import { handleLogs } from './logs-endpoint.js';
import type { LogFollowers } from '../../shared/logs/follow/log-followers.js';
import type { PublicHost, Registry } from '../../deploy/registry/registry.js';
import { sendError } from '../edge/http-response.js';

export interface OperatorViews {
  audit: AuditLog;
  followers: LogFollowers;
  registry: Registry;
  paths: DataPaths;
}

const LOGS = /^\/api\/([a-z0-9][a-z0-9-]{0,62})\/logs$/;

/**
 * The admin host's read-only views for operators, after authentication: `/audit` (the audit log)
 * and `/api/<key>/logs` (an API's request log). `path` is the part after `/anvil`; null for any
 * other path (the management API's).
 */
export function routeOperatorViews(req: IncomingMessage, res: ServerResponse, path: string, host: PublicHost, views: OperatorViews): Promise<void> | null {
  const url = req.url ?? '';
  const queryAt = url.indexOf('?');
  const params = new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1));
  if (path === '/audit') return handleAuditPage(req, res, params, host, views.audit);
  const logs = LOGS.exec(path);
  if (logs === null) return null;
  const key = logs[1]!;
  if (views.registry.getApi(host.name, key) === null) {
    sendError(res, 404, `unknown API "${key}"`);
    return Promise.resolve();
  }
  return handleLogs(req, res, params, key, join(views.paths.apiDataDir(host.name, host.env, key), 'logs'), views.followers);
}
