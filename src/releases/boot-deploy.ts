import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { deployFolder, type DeployTarget } from './deploy.js';

export interface BootDeployReport {
  deployed: Array<{ folder: string; key: string; release: string; created: boolean }>;
  invalid: Array<{ folder: string; errors: string[] }>;
}

/**
 * `anvil start --apis DIR`: every sub-folder with an api.yaml is deployed (a new release only if
 * its files changed); with `publish` each is made active and public. Invalid folders are reported
 * and skipped; the rest serve.
 */
export async function bootDeploy(apisDir: string, target: DeployTarget, publish: boolean): Promise<BootDeployReport> {
  const report: BootDeployReport = { deployed: [], invalid: [] };
  const entries = await readdir(apisDir, { withFileTypes: true });
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const folder = join(apisDir, entry.name);
    if (!entry.isDirectory() || !existsSync(join(folder, 'api.yaml'))) continue;
    const result = await deployFolder(folder, target, { reuseUnchanged: true });
    if (!result.ok) {
      report.invalid.push({ folder: entry.name, errors: result.errors });
      continue;
    }
    if (publish) target.registry.updateApi(target.host.name, result.key, { active: true, public: true, release: result.release });
    report.deployed.push({ folder: entry.name, key: result.key, release: result.release, created: result.created });
  }
  return report;
}
