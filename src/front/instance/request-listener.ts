import type { IncomingMessage, RequestListener } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { AuditLog } from '../audit/audit-log.js';
import { noteActionsOf, type NoteAction } from '../audit/management-audit.js';
import type { LogFollowers } from '../../shared/logs/follow/log-followers.js';
import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import type { ControlPlane } from '../../deploy/control-plane/control-plane.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { clientAddresses } from '../edge/client-address.js';
import { QUOTA_NAMES } from '../../shared/errors/quota-names.js';
import type { ManagementCounts } from '../admin/management-api.js';
import { AdminRouter } from '../admin/admin-router.js';
import { adminHandlers } from '../admin/admin-routes.js';
import type { PublicHost, Registry } from '../../deploy/registry/registry.js';
import { deployUpload } from '../../deploy/publish/deploy.js';
import { DeployAdmission } from '../../deploy/releases/deploy-admission.js';
import type { DeployWorker } from '../../deploy/releases/deploy-worker.js';
import { defaultUnpackLimits } from '../../deploy/releases/upload-limits.js';
import type { ActorTable } from '../scheduling/actor-table.js';
import type { ApiDirectory } from '../scheduling/api-directory.js';
import type { Dispatcher } from '../scheduling/dispatcher.js';
import { ConsoleFiles } from '../edge/console-files.js';
import { FrontDoor, type FrontDoorDeps } from '../edge/front-door.js';
import { authenticateAdmin } from '../edge/vhost-auth.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { Metrics } from '../meters/metrics.js';
import { OperationMeters } from '../meters/operation-meters.js';
import type { OperatorSources } from '../admin/overview.js';
import { ResponseBuffer } from '../edge/response-buffer.js';
import type { InstanceOptions } from './instance-options.js';

export interface FrontDoorParts {
  registry: Registry;
  controlPlane: ControlPlane;
  paths: DataPaths;
  deployWorker: DeployWorker;
  directory: ApiDirectory;
  dispatcher: Dispatcher;
  actors: ActorTable;
  metrics: Metrics;
  log: InstanceLog;
  audit: AuditLog;
  followers: LogFollowers;
  /** True while the instance serves, false once it drains. */
  ready(): boolean;
  /** What the operator endpoints (overview, stats) read. */
  operator: OperatorSources;
  /** The job queue, for an API's job actions on the admin host. */
  jobs: JobRunner;
}

/** Cluster mode's placement (src/front/placement): the hooks of the public and the internal listener. */
export interface FrontDoorPlacement {
  place: NonNullable<FrontDoorDeps['place']>;
  placeInternal: NonNullable<FrontDoorDeps['place']>;
  /** On the internal port: the client's address the forwarding instance gave. */
  internalClientAddress(req: IncomingMessage): string;
}

export interface FrontDoors {
  /** The public listener's handler. */
  handle: RequestListener;
  /** The internal listener's (cluster mode): requests other instances forward to this one, once authenticated. */
  internalHandle: RequestListener | null;
}

/** The console's files: `console/` of the package (src/front/instance and dist/front/instance alike are two levels below it). */
const CONSOLE_ROOT = fileURLToPath(new URL('../../../console/', import.meta.url));

/** The HTTP request handlers: APIs, the management API (deploys included) and the metrics. */
export function createFrontDoor(
  options: InstanceOptions,
  parts: FrontDoorParts,
  placement: FrontDoorPlacement | null = null,
): FrontDoors {
  const { registry, controlPlane, paths, directory, metrics, audit, followers } = parts;
  const addresses = clientAddresses(options.trustedProxies);
  const deployArchive = uploadDeployer(options, controlPlane, paths, parts.deployWorker);
  const responses = new ResponseBuffer(options.responseBufferBytes, (owner) =>
    metrics.quotaRefusals.inc({ host: owner.host, api: owner.key, quota: QUOTA_NAMES.responseBuffer }),
  );
  metrics.watchResponseBuffer(() => responses.bytes);
  const consoleFiles = new ConsoleFiles(CONSOLE_ROOT);
  const counted: ManagementCounts = {
    deploy: (host, ok, status) =>
      metrics.operations.deploys.inc({ host, result: OperationMeters.deployResult(ok, status) }),
    // Not the key of an API the host does not have: any caller could add labels without end.
    releaseChange: (host, api, change, result) =>
      metrics.operations.releaseChanges.inc({
        host,
        api: result === 'unknown_api' ? '(unknown)' : api,
        change,
        result,
      }),
  };
  // The caller's address and key fingerprint are worked out only when an action is recorded, not for every admin request.
  const noteFor =
    (req: IncomingMessage, host: PublicHost): NoteAction =>
    (action) =>
      noteActionsOf(audit, host, addresses.of(req))(action);
  const admin = new AdminRouter({
    authenticate: (req) => authenticateAdmin(req, directory),
    handlers: adminHandlers({
      ready: parts.ready,
      metrics: (req, res) => metrics.handle(req, res, addresses.of(req)),
      console: (req, res, path) => consoleFiles.serve(req, res, path),
      operator: parts.operator,
      views: { audit, followers, registry, paths },
      jobs: { jobs: parts.jobs, hasApi: (h, k) => registry.getApi(h, k) !== null, note: noteFor },
      management: {
        registry,
        controlPlane,
        directory,
        paths,
        deployUpload: deployArchive,
        retireApi: (h, k) => parts.actors.supersedeApi(h, k),
        note: noteFor,
        counted,
      },
    }),
  });
  const deps: FrontDoorDeps = {
    directory,
    dispatcher: parts.dispatcher,
    responses,
    log: parts.log,
    clientAddress: addresses.of,
    admin: (req, res, path, rawQuery) => admin.handle(req, res, path, rawQuery),
  };
  const doorOptions = { bodyLimit: options.bodyLimit };
  if (placement === null) return { handle: new FrontDoor(deps, doorOptions).handle, internalHandle: null };
  return {
    handle: new FrontDoor({ ...deps, place: placement.place }, doorOptions).handle,
    internalHandle: new FrontDoor(
      { ...deps, clientAddress: placement.internalClientAddress, place: placement.placeInternal },
      doorOptions,
    ).handle,
  };
}

/** Deploys an uploaded archive into a public host, within the upload limit. */
function uploadDeployer(
  options: InstanceOptions,
  controlPlane: ControlPlane,
  paths: DataPaths,
  worker: DeployWorker,
): (req: IncomingMessage, host: PublicHost) => ReturnType<typeof deployUpload> {
  const uploadLimits = {
    ...defaultUnpackLimits,
    maxUploadBytes: options.uploadLimit,
    maxUnpackedBytes: options.uploadLimit,
  };
  const admission = new DeployAdmission(options.maxQueuedDeploys);
  return (req, host) =>
    deployUpload(req, uploadLimits, { controlPlane, paths, host, worker, databaseUrl: options.databaseUrl, admission });
}
