import type { InstanceLog } from '../logs/instance-log.js';
import { deployApisFolder } from '../releases/boot-deploy.js';
import type { DeployTarget } from '../releases/deploy.js';
import { ApisWatcher } from '../releases/watch-apis.js';
import type { ApiDirectory } from '../router/api-directory.js';
import type { InstanceOptions } from './instance-options.js';

/** With `--watch`: redeploys an API folder of `--apis` when its files change. Null without. */
export function watchApis(options: InstanceOptions, log: InstanceLog, target: DeployTarget, directory: ApiDirectory): ApisWatcher | null {
  if (!options.watch || options.apisDir === null) return null;
  const apisDir = options.apisDir;
  const watcher = new ApisWatcher(apisDir, {
    settleMs: 150,
    redeploy: (name) => redeploy(apisDir, name, { publish: options.publish, log, target, directory }),
    onError: (error) => log.error({ err: error }, 'watching the API folders failed; changes are no longer redeployed'),
  });
  watcher.start();
  log.info({ apis: apisDir }, 'watching the API folders for changes');
  return watcher;
}

interface RedeployContext {
  publish: boolean;
  log: InstanceLog;
  target: DeployTarget;
  directory: ApiDirectory;
}

/** Deploys one changed folder; an invalid one leaves its last good release serving. */
async function redeploy(apisDir: string, name: string, { publish, log, target, directory }: RedeployContext): Promise<void> {
  try {
    const result = await deployApisFolder(apisDir, name, target, publish);
    if (!result.ok) {
      log.error({ folder: name, errors: result.errors }, `API folder "${name}" changed and is invalid: its last good release keeps serving`);
      return;
    }
    if (!result.created) return;
    directory.reload();
    log.info({ folder: name, api: result.key, release: result.release }, `redeployed ${result.key} (release ${result.release})`);
  } catch (error) {
    log.error({ folder: name, err: error }, `redeploying API folder "${name}" failed`);
  }
}
