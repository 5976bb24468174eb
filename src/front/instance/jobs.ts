import { Errors } from '../../shared/errors.js';
import type { JobQueue, QueueCounts } from '../jobs/job-queue.js';
import { openJobQueue } from '../jobs/open-queue.js';
import { formatApiId } from '../../shared/protocol/api-id.js';
import type { Registry } from '../../deploy/registry/registry.js';
import type { ActorTable } from '../scheduling/actor-table.js';
import type { ApiDirectory } from '../scheduling/api-directory.js';
import type { Dispatcher } from '../scheduling/dispatcher.js';
import type { HostDiskWatch } from '../scheduling/host-disk-watch.js';
import { JobRunner } from '../jobs/job-runner.js';
import type { Metrics } from '../meters/metrics.js';
import type { InstanceOptions } from './instance-options.js';

export interface JobsDeps {
  registry: Registry;
  directory: ApiDirectory;
  dispatcher: Dispatcher;
  actors: ActorTable;
  metrics: Metrics;
  hostDisk: HostDiskWatch;
}

/** Opens the job queue (Redis or embedded) and its runner; threads enqueue through the actor table. Not started yet. */
export async function openJobs(options: InstanceOptions, deps: JobsDeps): Promise<JobRunner> {
  const { directory, dispatcher, actors, metrics } = deps;
  const queue = await openJobQueue({
    dataDir: options.dataDir,
    redisUrl: options.redisUrl ?? undefined,
    prefix: options.redisPrefix,
  });
  const jobs = new JobRunner(
    queue,
    directory,
    dispatcher,
    (caller, quota) => metrics.quotaRefusals.inc({ host: caller.host, api: caller.key, quota }),
    (host, api, outcome) => metrics.jobOutcome(host, api, outcome),
    (host) => {
      const used = deps.hostDisk.overBy(host);
      return used === null ? null : Errors.quotaHostDisk(host, used, deps.hostDisk.maxBytes);
    },
  );
  actors.useJobs((caller, request) => jobs.enqueue(caller, request));
  metrics.watchQueue(() => queueCounts(queue, deps.registry, directory));
  return jobs;
}

/** Every API's job counts, for the metrics. */
async function queueCounts(
  queue: JobQueue,
  registry: Registry,
  directory: ApiDirectory,
): Promise<Array<{ host: string; api: string; counts: QueueCounts }>> {
  const out: Array<{ host: string; api: string; counts: QueueCounts }> = [];
  for (const host of directory.publicHosts()) {
    for (const key of registry.listApiKeys(host.name))
      out.push({
        host: host.name,
        api: key,
        counts: await queue.counts(formatApiId({ host: host.name, env: host.env, key })),
      });
  }
  return out;
}
