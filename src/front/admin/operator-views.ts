import { join } from 'node:path';
import { auditPage } from '../audit/audit-endpoint.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import { Errors } from '../../shared/errors.js';
import { apiLogs } from './logs-endpoint.js';
import type { LogFollowers } from '../../shared/logs/follow/log-followers.js';
import type { Registry } from '../../deploy/registry/registry.js';
import type { HostCall } from './admin-router.js';

export interface OperatorViews {
  audit: AuditLog;
  followers: LogFollowers;
  registry: Registry;
  paths: DataPaths;
}

/** The admin host's read-only views for operators: `/audit` (the audit log) and `/api/<key>/logs` (an API's request log). */
export function operatorViewHandlers(views: OperatorViews) {
  return {
    audit: ({ query, host }: HostCall) => auditPage(query, host, views.audit),
    logs: ({ res, query, host, params }: HostCall) => {
      const key = params.key!;
      if (views.registry.getApi(host.name, key) === null) throw Errors.unknownApi(key);
      return apiLogs(res, query, key, join(views.paths.apiDataDir(host.name, host.env, key), 'logs'), views.followers);
    },
  };
}
