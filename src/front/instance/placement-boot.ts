import type { RequestListener } from 'node:http';
import { clientAddresses } from '../edge/client-address.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { Metrics } from '../meters/metrics.js';
import type { ActorTable } from '../scheduling/actor-table.js';
import type { ApiDirectory } from '../scheduling/api-directory.js';
import type { Bus, PlaceBusCall } from '../scheduling/bus.js';
import type { JobRunner, PlaceJobRun } from '../jobs/job-runner.js';
import type { FrontDoorPlacement } from './request-listener.js';
import { listenHttp, type ListeningServer } from './http-server.js';
import type { InstanceOptions } from './instance-options.js';

export interface OpenedPlacement {
  hooks: FrontDoorPlacement;
  /** Where the jobs and bus calls of placed APIs run: on their owner. */
  placeJobRun: PlaceJobRun;
  placeBusCall: PlaceBusCall;
  /**
   * Starts the internal listener in front of `handle` (the cluster secret checked first; the jobs
   * and bus calls other instances hand over go to `work`) and the placement rounds.
   */
  listen(handle: RequestListener, metrics: Metrics, work: { jobs: JobRunner; bus: Bus }): Promise<ListeningServer>;
  /** Gives the leases back; once the listeners are closed and in-flight work is done. */
  close(): Promise<void>;
}

/**
 * Cluster mode (DATABASE_URL) only: the placement of APIs that keep data on an instance's disk
 * (src/front/placement, loaded here so that one instance never loads it). Null without DATABASE_URL.
 */
export async function openPlacement(
  options: InstanceOptions,
  directory: ApiDirectory,
  actors: ActorTable,
  log: InstanceLog,
): Promise<OpenedPlacement | null> {
  if (options.databaseUrl === null) return null;
  const [{ Placement }, { internalClientAddress, internalDoor }, { internalOps }] = await Promise.all([
    import('../placement/placement.js'),
    import('../placement/internal-door.js'),
    import('../placement/internal-ops.js'),
  ]);
  const { leaseMs, internalListen, internalPort, internalAdvertise } = options.placement;
  const placement = await Placement.open({
    databaseUrl: options.databaseUrl,
    leaseMs,
    requestTimeoutMs: options.requestTimeoutMs,
    directory,
    clientAddress: clientAddresses(options.trustedProxies).of,
    retirePeers: (host, key) => actors.supersedeApi(host, key),
    log,
  });
  return {
    hooks: { place: placement.place, placeInternal: placement.placeInternal, internalClientAddress },
    placeJobRun: placement.work.placeJobRun,
    placeBusCall: placement.work.placeBusCall,
    async listen(handle, metrics, { jobs, bus }) {
      const ops = internalOps({
        refusal: (id, epoch) => placement.refusal(id, epoch),
        runJob: (job) => jobs.runHere(job),
        callBus: (host, call, reply) => bus.callHere(host, call, reply),
        log,
      });
      const internal = await listenHttp(
        { ...options, listen: internalListen, port: internalPort, proxyProtocol: false },
        internalDoor(placement.secret, handle, ops, log),
        metrics,
        log,
        null,
      );
      const host =
        internalAdvertise.includes(':') && !internalAdvertise.startsWith('[')
          ? `[${internalAdvertise}]`
          : internalAdvertise;
      await placement.begin(`http://${host}:${internal.port}`);
      return internal;
    },
    close: () => placement.close(),
  };
}
