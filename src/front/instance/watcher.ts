import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { Registry } from '../../deploy/registry/registry.js';
import { deployApisFolder, type BootDeployReport } from '../../deploy/publish/boot-deploy.js';
import type { DeployTarget } from '../../deploy/publish/deploy.js';
import { ApisWatcher } from '../../deploy/releases/watch-apis.js';
import type { ApiDirectory } from '../scheduling/api-directory.js';
import type { InstanceOptions } from './instance-options.js';

/**
 * With `--watch`: redeploys an API folder of `--apis` when its files change, says when a folder
 * that was invalid is fixed, and disables the API of a folder that is deleted. Null without.
 */
export function watchApis(
  options: InstanceOptions,
  log: InstanceLog,
  target: DeployTarget,
  directory: ApiDirectory,
  registry: Registry,
  boot: BootDeployReport | null,
): ApisWatcher | null {
  if (!options.watch || options.apisDir === null) return null;
  const apisDir = options.apisDir;
  const context: WatchContext = {
    publish: options.publish,
    log,
    target,
    directory,
    registry,
    keys: new Map(),
    broken: new Set(),
  };
  for (const deployed of boot?.deployed ?? []) context.keys.set(deployed.folder, deployed.key);
  for (const invalid of boot?.invalid ?? []) context.broken.add(invalid.folder);
  const watcher = new ApisWatcher(apisDir, {
    settleMs: 150,
    redeploy: (name) => redeploy(apisDir, name, context),
    removed: (name) => removed(name, context),
    onError: (error) => log.error({ err: error }, 'watching the API folders failed; changes are no longer redeployed'),
  });
  watcher.start();
  log.info({ apis: apisDir }, 'watching the API folders for changes');
  return watcher;
}

interface WatchContext {
  publish: boolean;
  log: InstanceLog;
  target: DeployTarget;
  directory: ApiDirectory;
  registry: Registry;
  /** The API key each folder deployed last (its api.yaml is gone with a deleted folder). */
  keys: Map<string, string>;
  /** Folders whose last change was invalid. */
  broken: Set<string>;
}

/** Deploys one changed folder; an invalid one leaves its last good release serving. */
async function redeploy(apisDir: string, name: string, context: WatchContext): Promise<void> {
  const { publish, log, target, directory } = context;
  try {
    const result = await deployApisFolder(apisDir, name, target, publish);
    if (!result.ok) {
      context.broken.add(name);
      log.error(
        { event: 'invalid', folder: name, errors: result.errors },
        `API folder "${name}" changed and is invalid: its last good release keeps serving`,
      );
      return;
    }
    context.keys.set(name, result.key);
    if (result.created) {
      directory.reload();
      log.info(
        { event: 'redeployed', folder: name, api: result.key, release: result.release },
        `redeployed ${result.key} (release ${result.release})`,
      );
    }
    // A revert to the files of the release that kept serving makes no new release: it is still news.
    if (context.broken.delete(name))
      log.info(
        { event: 'fixed', folder: name, api: result.key, release: result.release },
        `API folder "${name}" is fixed: ${result.key} serves release ${result.release}`,
      );
  } catch (error) {
    log.error({ folder: name, err: error }, `redeploying API folder "${name}" failed`);
  }
}

/** A deleted folder's API is disabled (its releases and data stay: `anvil remove` deletes them). */
async function removed(name: string, context: WatchContext): Promise<void> {
  const { log, target, directory, registry } = context;
  context.broken.delete(name);
  const key = context.keys.get(name);
  if (key === undefined) return;
  context.keys.delete(name);
  try {
    const record = registry.getApi(target.host.name, key);
    if (record === null || !record.active) return;
    await target.controlPlane.updateApi(target.host.name, key, {
      active: false,
      release: record.release,
      public: record.public,
    });
    directory.reload();
    log.info(
      { event: 'deleted', folder: name, api: key },
      `API folder "${name}" was deleted: ${key} is disabled (its releases and data are kept; anvil remove deletes them)`,
    );
  } catch (error) {
    log.error({ folder: name, err: error }, `disabling the API of deleted folder "${name}" failed`);
  }
}
