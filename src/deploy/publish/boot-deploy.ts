import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { deployFolder, type DeployTarget } from './deploy.js';

export type FolderDeploy =
  | { ok: true; folder: string; key: string; release: string; created: boolean }
  | { ok: false; folder: string; errors: string[] };

export interface BootDeployReport {
  deployed: Array<{ folder: string; key: string; release: string; created: boolean }>;
  invalid: Array<{ folder: string; errors: string[] }>;
}

/**
 * Deploys one sub-folder of `--apis` (a new release only if its files changed); with `publish` it
 * is made active and public. Used at boot and by `--watch`.
 */
export async function deployApisFolder(
  apisDir: string,
  name: string,
  target: DeployTarget,
  publish: boolean,
): Promise<FolderDeploy> {
  const result = await deployFolder(join(apisDir, name), target, { reuseUnchanged: true });
  if (!result.ok) return { ok: false, folder: name, errors: result.errors };
  if (publish)
    await target.controlPlane.updateApi(target.host.name, result.key, {
      active: true,
      public: true,
      release: result.release,
    });
  return { ok: true, folder: name, key: result.key, release: result.release, created: result.created };
}

/** The sub-folders of `apisDir` that hold an api.yaml, by name. */
export async function apiFolderNames(apisDir: string): Promise<string[]> {
  const entries = await readdir(apisDir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isDirectory() && existsSync(join(apisDir, entry.name, 'api.yaml')))
    .map((entry) => entry.name)
    .sort((a, b) => a.localeCompare(b));
}

/**
 * `anvil start --apis DIR`: every sub-folder with an api.yaml is deployed. Invalid folders are
 * reported and skipped; the rest serve.
 */
export async function bootDeploy(apisDir: string, target: DeployTarget, publish: boolean): Promise<BootDeployReport> {
  const report: BootDeployReport = { deployed: [], invalid: [] };
  for (const name of await apiFolderNames(apisDir)) {
    const result = await deployApisFolder(apisDir, name, target, publish);
    if (result.ok)
      report.deployed.push({ folder: name, key: result.key, release: result.release, created: result.created });
    else report.invalid.push({ folder: name, errors: result.errors });
  }
  return report;
}
