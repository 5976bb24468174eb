import { rm } from 'node:fs/promises';
import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import type { ReplicaSync } from '../../deploy/control-plane/replica-sync.js';
import type { ActorTable } from '../scheduling/actor-table.js';
import type { ApiDirectory } from '../scheduling/api-directory.js';

/**
 * Cluster mode: after each change copied from the control plane, the instance serves it as it would
 * its own write (the management API's reload), and an API deleted elsewhere stops here and its
 * data here is deleted too.
 */
export function followControlPlane(
  sync: ReplicaSync | null,
  directory: ApiDirectory,
  actors: ActorTable,
  paths: DataPaths,
): void {
  sync?.whenApplied(({ removed }) => {
    directory.reload();
    for (const api of removed) {
      actors.supersedeApi(api.host, api.key);
      void rm(paths.apiDataDir(api.host, api.env, api.key), { recursive: true, force: true });
    }
  });
}
