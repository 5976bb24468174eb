import { readFileSync } from 'node:fs';
import type { QueueCounts } from '../jobs/job-queue.js';
import { formatApiId } from '../../shared/protocol/api-id.js';
import type { PublicHost } from '../../deploy/registry/registry.js';
import type { ActorTable } from '../scheduling/actor-table.js';
import type { ApiDirectory } from '../scheduling/api-directory.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { Metrics } from '../meters/metrics.js';
import type { OperatorSources } from './overview.js';

/** Job counts are read from the queue (one query per API): kept this long, as a console polls every second. */
const JOB_COUNTS_FRESH_MS = 2_000;

export interface OperatorParts {
  directory: ApiDirectory;
  actors: ActorTable;
  metrics: Metrics;
  jobs: JobRunner;
  cells(): number;
}

/** What GET /anvil/overview and /anvil/api/<key>/stats read, from the running instance's parts. */
export function operatorSources(parts: OperatorParts): OperatorSources {
  const startedAt = Date.now();
  const cached = new Map<string, { at: number; counts: Promise<Map<string, QueueCounts>> }>();
  return {
    version: packageVersion(),
    startedAt,
    directory: parts.directory,
    live: parts.metrics.live,
    actors: () => parts.actors.gauges(),
    pausedUntil: (api) => parts.actors.pausedUntil(api),
    hostFault: (host) => {
      const state = parts.actors.hostFault({ host: host.name, env: host.env });
      if (state === null) return null;
      const { aborts, windowMs } = parts.actors.hostFaultLimits;
      return {
        stage: state.stage,
        culprits: state.culprits,
        pausedUntil: state.pausedUntil > 0 ? new Date(state.pausedUntil).toISOString() : null,
        abortLimit: aborts,
        windowSeconds: Math.round(windowMs / 1000),
      };
    },
    cells: parts.cells,
    jobCounts: (host) => {
      const hit = cached.get(host.name);
      if (hit !== undefined && Date.now() - hit.at < JOB_COUNTS_FRESH_MS) return hit.counts;
      const counts = readJobCounts(parts, host);
      cached.set(host.name, { at: Date.now(), counts });
      // A failed read (Redis away) is not kept: the next request tries again.
      counts.catch(() => cached.delete(host.name));
      return counts;
    },
  };
}

async function readJobCounts(parts: OperatorParts, host: PublicHost): Promise<Map<string, QueueCounts>> {
  const entries = [...parts.directory.apisOf(host.name)];
  const counts = await Promise.all(entries.map((e) => parts.jobs.counts(formatApiId(e.spec))));
  return new Map(entries.map((e, i) => [e.record.key, counts[i]!]));
}

function packageVersion(): string {
  try {
    // src/front/instance and dist/front/instance alike are two levels below the package root.
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
