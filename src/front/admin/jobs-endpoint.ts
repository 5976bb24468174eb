import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NoteAction } from '../audit/management-audit.js';
import type { QueueCounts } from '../jobs/job-queue.js';
import { formatApiId } from '../../shared/protocol/api-id.js';
import type { PublicHost } from '../../deploy/registry/registry.js';
import { sendError, sendJson } from '../edge/http-response.js';

/** What the endpoint does with one API's jobs (`<host>/<env>/<key>`): the job runner's queue. */
export interface ApiJobs {
  counts(api: string): Promise<QueueCounts>;
  flush(api: string): Promise<number>;
  requeueFailed(api: string): Promise<number>;
}

export interface JobsEndpointDeps {
  jobs: ApiJobs;
  /** True when the host has an API of that key. */
  hasApi(host: string, key: string): boolean;
  /** Records a job action (and its outcome) in the audit log. */
  note: NoteAction;
}

const JOBS = /^\/api\/([a-z0-9][a-z0-9-]{0,62})\/jobs(?:\/([^/]+))?$/;
const ACTIONS = {
  flush: { audit: 'jobs-flush', count: 'removed', run: (jobs: ApiJobs, api: string) => jobs.flush(api) },
  'requeue-failed': { audit: 'jobs-requeue-failed', count: 'requeued', run: (jobs: ApiJobs, api: string) => jobs.requeueFailed(api) },
} as const;
type ActionName = keyof typeof ACTIONS;

/**
 * An API's jobs on the admin host (the management API's credentials), what `anvil jobs` does on a
 * data dir, for the console: `GET /anvil/api/<key>/jobs` (counts per state),
 * `POST /anvil/api/<key>/jobs/requeue-failed` and `POST /anvil/api/<key>/jobs/flush`, audited as
 * `jobs-requeue-failed` and `jobs-flush`. Null when `path` (after `/anvil`) is not one of them.
 */
export function handleJobs(req: IncomingMessage, res: ServerResponse, path: string, host: PublicHost, deps: JobsEndpointDeps): Promise<void> | null {
  const match = JOBS.exec(path);
  if (match === null) return null;
  const key = match[1]!;
  const action = match[2];
  const api = formatApiId({ host: host.name, env: host.env, key });
  if (action === undefined) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, 'Method Not Allowed', { allow: 'GET' });
    if (!deps.hasApi(host.name, key)) return refuse(res, 404, `unknown API "${key}"`);
    return deps.jobs.counts(api).then(
      (counts) => sendJson(res, 200, { key, counts }, { 'cache-control': 'no-store' }),
      (error: unknown) => sendError(res, 503, `the job queue cannot be read: ${(error as Error).message}`, { 'retry-after': '5' }),
    );
  }
  if (!Object.hasOwn(ACTIONS, action)) return refuse(res, 404, `unknown job action "${action}" (${Object.keys(ACTIONS).join(', ')})`);
  if (req.method !== 'POST') return refuse(res, 405, 'Method Not Allowed', { allow: 'POST' });
  return runAction(res, key, api, action as ActionName, host, deps);
}

async function runAction(res: ServerResponse, key: string, api: string, name: ActionName, host: PublicHost, deps: JobsEndpointDeps): Promise<void> {
  const action = ACTIONS[name];
  if (!deps.hasApi(host.name, key)) {
    const error = `unknown API "${key}"`;
    await deps.note({ action: action.audit, api: key, status: 404, error });
    return sendError(res, 404, error);
  }
  let count: number;
  try {
    count = await action.run(deps.jobs, api);
  } catch (error) {
    const message = `the job queue cannot be changed: ${(error as Error).message}`;
    await deps.note({ action: action.audit, api: key, status: 503, error: message });
    return sendError(res, 503, message, { 'retry-after': '5' });
  }
  await deps.note({ action: action.audit, api: key, status: 200, detail: { [action.count]: count } });
  sendJson(res, 200, { key, [action.count]: count });
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): Promise<void> {
  sendError(res, status, message, headers);
  return Promise.resolve();
}
