import type { IncomingMessage } from 'node:http';
import type { DataPaths } from '../config/data-paths.js';
import type { InstanceLog } from '../logs/instance-log.js';
import { clientAddresses } from '../http/client-address.js';
import { QUOTA_NAMES } from '../quotas/api-quotas.js';
import { handleManagement } from '../registry/management-api.js';
import type { PublicHost, Registry } from '../registry/registry.js';
import { deployUpload } from '../releases/deploy.js';
import type { DeployWorker } from '../releases/deploy-worker.js';
import { defaultUnpackLimits } from '../releases/upload-limits.js';
import type { ActorTable } from '../router/actor-table.js';
import type { ApiDirectory } from '../router/api-directory.js';
import type { Dispatcher } from '../router/dispatcher.js';
import { FrontDoor } from '../router/front-door.js';
import type { Metrics } from '../router/metrics.js';
import { ResponseBuffer } from '../router/response-buffer.js';
import type { InstanceOptions } from './instance-options.js';

export interface FrontDoorParts {
  registry: Registry;
  paths: DataPaths;
  deployWorker: DeployWorker;
  directory: ApiDirectory;
  dispatcher: Dispatcher;
  actors: ActorTable;
  metrics: Metrics;
  log: InstanceLog;
  /** True while the instance serves, false once it drains. */
  ready(): boolean;
}

/** The HTTP request handler: APIs, the management API (deploys included) and the metrics. */
export function createFrontDoor(options: InstanceOptions, parts: FrontDoorParts): FrontDoor {
  const { registry, paths, directory, metrics } = parts;
  const addresses = clientAddresses(options.trustedProxies);
  const deployArchive = uploadDeployer(options, registry, paths, parts.deployWorker);
  const responses = new ResponseBuffer(options.responseBufferBytes, (owner) => metrics.quotaRefusals.inc({ host: owner.host, api: owner.key, quota: QUOTA_NAMES.responseBuffer }));
  metrics.watchResponseBuffer(() => responses.bytes);
  return new FrontDoor(
    {
      directory,
      dispatcher: parts.dispatcher,
      responses,
      ready: parts.ready,
      log: parts.log,
      metrics: (req, res) => metrics.handle(req, res, addresses.of(req)),
      clientAddress: addresses.of,
      management: (req, res, path, host) =>
        handleManagement(req, res, path, host, { registry, directory, paths, deployUpload: deployArchive, retireApi: (h, k) => parts.actors.supersedeApi(h, k) }),
    },
    { bodyLimit: options.bodyLimit },
  );
}

/** Deploys an uploaded archive into a public host, within the upload limit. */
function uploadDeployer(options: InstanceOptions, registry: Registry, paths: DataPaths, worker: DeployWorker): (req: IncomingMessage, host: PublicHost) => ReturnType<typeof deployUpload> {
  const uploadLimits = { ...defaultUnpackLimits, maxUploadBytes: options.uploadLimit, maxUnpackedBytes: options.uploadLimit };
  return (req, host) => deployUpload(req, uploadLimits, { registry, paths, host, worker, databaseUrl: options.databaseUrl });
}
