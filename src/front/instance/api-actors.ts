import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { Registry } from '../../deploy/registry/registry.js';
import { ActorTable } from '../scheduling/actor-table.js';
import { ApiDirectory } from '../scheduling/api-directory.js';
import type { InstanceOptions } from './instance-options.js';

export interface ApiActors {
  actors: ActorTable;
  directory: ApiDirectory;
}

/**
 * The actor table (sharing its fault decisions through Redis when there is one) and the directory
 * of the registry's APIs it serves. `localBaseUrl` is the
 * instance's own origin (its port is known once the HTTP server listens).
 */
export async function createApiActors(
  options: InstanceOptions,
  log: InstanceLog,
  registry: Registry,
  paths: DataPaths,
  localBaseUrl: () => string,
): Promise<ApiActors> {
  const actors = new ActorTable(
    options.cells,
    options.maxCells,
    options.actors,
    (level, msg, fields) => log[level](fields ?? {}, msg),
    options.hostFaults,
  );
  // Several instances on one Redis quarantine and pause a crashing API together. The Redis client
  // is loaded only then: a router without REDIS_URL starts ~70 ms sooner.
  if (options.redisUrl) {
    const { RedisFaultBoard } = await import('../scheduling/redis-fault-board.js');
    actors.shareFaults(
      new RedisFaultBoard({
        url: options.redisUrl,
        prefix: options.redisPrefix,
        log: (level, msg, fields) => log[level](fields, msg),
      }),
    );
  }
  const stores = {
    dataRoot: options.dataDir,
    redisUrl: options.redisUrl,
    redisPrefix: options.redisPrefix,
    databaseUrl: options.databaseUrl,
  };
  const directory = new ApiDirectory(
    registry,
    paths,
    localBaseUrl,
    options.sandbox,
    options.quotas,
    stores,
    options.egressAllow,
    options.maxJsonDepth,
    (ids) => ids.forEach((id) => actors.supersede(id)),
  );
  directory.reload();
  return { actors, directory };
}
