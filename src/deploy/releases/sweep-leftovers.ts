import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { DataPaths } from '../api-yaml/data-paths.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { Registry } from '../registry/registry.js';

/**
 * At start, under the data directory's lock (no deploy can be running): removes what a killed
 * instance left of the deploys it had in flight — work folders under `.anvil/tmp`, and release
 * folders moved into place but never recorded (or pruned from the registry but not yet from disk).
 * A release is served only once recorded, so none of these was ever served.
 */
export function sweepDeployLeftovers(paths: DataPaths, registry: Registry, log: InstanceLog): void {
  const removed: string[] = [];
  for (const entry of list(paths.tmpDir)) {
    rmSync(join(paths.tmpDir, entry), { recursive: true, force: true });
    removed.push(join('tmp', entry));
  }
  const releasesRoot = join(paths.platformDir, 'releases');
  for (const host of list(releasesRoot)) {
    for (const key of list(join(releasesRoot, host))) {
      for (const release of list(paths.apiReleasesDir(host, key))) {
        if (registry.getRelease(host, key, release) !== null) continue;
        rmSync(paths.releaseDir(host, key, release), { recursive: true, force: true });
        removed.push(join('releases', host, key, release));
      }
    }
  }
  if (removed.length > 0) log.warn({ removed }, 'removed what an interrupted deploy left in the data directory');
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
