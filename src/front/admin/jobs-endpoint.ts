import type { IncomingMessage } from 'node:http';
import type { PublicHost } from '../../deploy/registry/registry.js';
import type { NoteAction } from '../audit/management-audit.js';
import type { QueueCounts } from '../jobs/job-queue.js';
import { formatApiId } from '../../shared/protocol/api-id.js';
import { Errors } from '../../shared/errors.js';
import type { AdminAnswer, HostCall } from './admin-router.js';

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
  /** Records a job action (and its outcome) in the audit log, as the request's caller. */
  note(req: IncomingMessage, host: PublicHost): NoteAction;
}

const ACTIONS = {
  flush: { audit: 'jobs-flush', count: 'removed', run: (jobs: ApiJobs, api: string) => jobs.flush(api) },
  'requeue-failed': {
    audit: 'jobs-requeue-failed',
    count: 'requeued',
    run: (jobs: ApiJobs, api: string) => jobs.requeueFailed(api),
  },
} as const;
type ActionName = keyof typeof ACTIONS;

/**
 * An API's jobs on the admin host (the management API's credentials), what `anvil jobs` does on a
 * data dir, for the console: `GET /anvil/api/<key>/jobs` (counts per state),
 * `POST /anvil/api/<key>/jobs/requeue-failed` and `POST /anvil/api/<key>/jobs/flush`, audited as
 * `jobs-requeue-failed` and `jobs-flush`.
 */
export function jobHandlers(deps: JobsEndpointDeps) {
  return {
    jobCounts: async ({ host, params }: HostCall): Promise<AdminAnswer> => {
      const key = params.key!;
      if (!deps.hasApi(host.name, key)) throw Errors.unknownApi(key);
      let counts: QueueCounts;
      try {
        counts = await deps.jobs.counts(formatApiId({ host: host.name, env: host.env, key }));
      } catch (error) {
        throw Errors.jobQueueUnreadable((error as Error).message);
      }
      return { body: { key, counts }, headers: { 'cache-control': 'no-store' } };
    },
    jobAction: (call: HostCall): Promise<AdminAnswer> => {
      const action = call.params.action!;
      if (!Object.hasOwn(ACTIONS, action)) throw Errors.unknownJobAction(action, Object.keys(ACTIONS).join(', '));
      return runAction(call, action as ActionName, deps);
    },
  };
}

async function runAction(
  { req, host, params }: HostCall,
  name: ActionName,
  deps: JobsEndpointDeps,
): Promise<AdminAnswer> {
  const key = params.key!;
  const action = ACTIONS[name];
  const note = deps.note(req, host);
  if (!deps.hasApi(host.name, key)) {
    const error = Errors.unknownApi(key);
    await note({ action: action.audit, api: key, status: 404, error: error.message });
    throw error;
  }
  let count: number;
  try {
    count = await action.run(deps.jobs, formatApiId({ host: host.name, env: host.env, key }));
  } catch (failure) {
    const error = Errors.jobQueueUnchanged((failure as Error).message);
    await note({ action: action.audit, api: key, status: 503, error: error.message });
    throw error;
  }
  await note({ action: action.audit, api: key, status: 200, detail: { [action.count]: count } });
  return { body: { key, [action.count]: count } };
}
