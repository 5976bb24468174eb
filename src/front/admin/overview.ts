import type { QueueCounts } from '../jobs/job-queue.js';
import type { ApiId } from '../../shared/protocol/api-id.js';
import { emptySums, windowFigures, type WindowFigures } from '../../shared/metrics/window-figures.js';
import type { PublicHost } from '../../deploy/registry/registry.js';
import type { ApiDirectory, ApiEntry } from '../scheduling/api-directory.js';
import type { ApiRings, LiveFigures } from '../meters/live-figures.js';
import { FIELD } from '../../shared/metrics/second-ring.js';
import { apiWindow, covered, WINDOWS } from '../meters/live-windows.js';
import type { ActorGauges } from '../meters/metrics.js';

/** Where the operator endpoints read the instance's state (all in the router's memory but the jobs). */
export interface OperatorSources {
  version: string;
  /** When the instance started, ms since epoch. */
  startedAt: number;
  directory: ApiDirectory;
  live: LiveFigures;
  /** Threads and mailbox per API (the actor table). */
  actors(): ActorGauges[];
  /** Until when the fault policy pauses an API (ms since epoch), 0 when it does not. */
  pausedUntil(api: ApiId): number;
  /** What the fault policy holds against a public host whose APIs aborted cells (host-faults.ts), or null. */
  hostFault(host: PublicHost): HostFaultOverview | null;
  cells(): number;
  /** Jobs per state of each API of the host, by key (may be a few seconds old). */
  jobCounts(host: PublicHost): Promise<Map<string, QueueCounts>>;
}

/** The host-level fault state in the overview (its APIs aborted cells: front/scheduling/host-faults.ts). */
export interface HostFaultOverview {
  /** `new-apis`: its APIs that start now start in its quarantine cell; `all-apis`: all run there; null: neither any more. */
  stage: 'new-apis' | 'all-apis' | null;
  /** Its APIs that aborted cells within the window. */
  culprits: string[];
  /** Until when every API of the host is paused (ISO time), null when it is not. */
  pausedUntil: string | null;
  /** The limits: APIs aborting cells within `windowSeconds` before the host is moved. */
  abortLimit: number;
  windowSeconds: number;
}

/** `paused`: the fault policy holds it (answers 503); else `public`, `active` (private) or `disabled`. */
export type ApiStatus = 'paused' | 'public' | 'active' | 'disabled';

export interface ApiOverview {
  key: string;
  host: string;
  release: string;
  status: ApiStatus;
  active: boolean;
  public: boolean;
  /** Until when the API is paused (ISO time), null when it is not. */
  pausedUntil: string | null;
  threads: number;
  /** Requests waiting in its mailbox now. */
  mailbox: number;
  /** Jobs waiting (waiting or delayed) and failed (kept until requeued or flushed), now; null when the queue could not be read. */
  jobs: { waiting: number; failed: number } | null;
  last1m: WindowFigures;
  last5m: WindowFigures;
  /** Requests in each of the last RECENT_SECONDS whole seconds, oldest first (a sparkline); null when none in five minutes. */
  recentRequests: number[] | null;
}

/** How many seconds `recentRequests` holds. */
export const RECENT_SECONDS = 60;

/** GET /anvil/overview: the instance, then every API of the public host the caller acts for. */
export async function overview(sources: OperatorSources, host: PublicHost): Promise<unknown> {
  const wall = Date.now();
  const now = sources.live.now();
  const uptimeSeconds = Math.max(0, Math.floor((wall - sources.startedAt) / 1000));
  const gauges = new Map<string, ActorGauges>();
  let threads = 0;
  for (const g of sources.actors()) {
    threads += g.threads;
    if (g.host === host.name) gauges.set(g.api, g);
  }
  const jobs = await sources.jobCounts(host).catch(() => null);
  const sums1m = emptySums();
  const sums5m = emptySums();
  const apis: ApiOverview[] = [];
  for (const entry of sources.directory.apisOf(host.name)) {
    apis.push(
      apiOverview(
        sources,
        entry,
        gauges.get(entry.record.key),
        jobs === null ? null : (jobs.get(entry.record.key) ?? EMPTY_COUNTS),
        { now, wall, uptimeSeconds, sums1m, sums5m },
      ),
    );
  }
  apis.sort((a, b) => a.key.localeCompare(b.key));
  const count = (status: ApiStatus) => apis.filter((a) => a.status === status).length;
  return {
    instance: {
      version: sources.version,
      startedAt: new Date(sources.startedAt).toISOString(),
      uptimeSeconds,
      cells: sources.cells(),
      threads,
    },
    host: host.name,
    faults: sources.hostFault(host),
    totals: {
      apis: apis.length,
      public: count('public'),
      active: count('active'),
      paused: count('paused'),
      disabled: count('disabled'),
      threads: apis.reduce((n, a) => n + a.threads, 0),
      jobs:
        jobs === null
          ? null
          : {
              waiting: apis.reduce((n, a) => n + (a.jobs?.waiting ?? 0), 0),
              failed: apis.reduce((n, a) => n + (a.jobs?.failed ?? 0), 0),
            },
      last1m: windowFigures(sums1m, covered(WINDOWS['1m'], uptimeSeconds)),
      last5m: windowFigures(sums5m, covered(WINDOWS['5m'], uptimeSeconds)),
    },
    apis,
  };
}

interface Moment {
  now: number;
  wall: number;
  uptimeSeconds: number;
  sums1m: Float64Array;
  sums5m: Float64Array;
}

const EMPTY_COUNTS: QueueCounts = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0 };

function apiOverview(
  sources: OperatorSources,
  entry: ApiEntry,
  gauge: ActorGauges | undefined,
  jobs: QueueCounts | null,
  at: Moment,
): ApiOverview {
  const { record, host } = entry;
  const pausedUntil = record.active ? sources.pausedUntil(entry.spec) : 0;
  const paused = pausedUntil > at.wall;
  const status: ApiStatus = paused ? 'paused' : !record.active ? 'disabled' : record.public ? 'public' : 'active';
  const rings = sources.live.of(host.name, record.key);
  return {
    key: record.key,
    host: host.name,
    release: record.release,
    status,
    active: record.active,
    public: record.public,
    pausedUntil: paused ? new Date(pausedUntil).toISOString() : null,
    threads: gauge?.threads ?? 0,
    mailbox: gauge?.mailbox ?? 0,
    jobs: jobs === null ? null : { waiting: jobs.waiting + jobs.delayed, failed: jobs.failed },
    last1m: apiWindow(rings, at.now, WINDOWS['1m'], covered(WINDOWS['1m'], at.uptimeSeconds), at.sums1m),
    last5m: apiWindow(rings, at.now, WINDOWS['5m'], covered(WINDOWS['5m'], at.uptimeSeconds), at.sums5m),
    recentRequests: rings === undefined ? null : recentRequests(rings, at.now),
  };
}

/** The seconds before `now` (the current one is still counting, so it would always dip). */
function recentRequests(rings: ApiRings, now: number): number[] {
  const counts: number[] = [];
  for (let second = now - RECENT_SECONDS; second < now; second++)
    counts.push(rings.api.at(second)?.[FIELD.requests] ?? 0);
  return counts;
}
