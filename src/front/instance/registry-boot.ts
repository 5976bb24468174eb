import { mkdirSync } from 'node:fs';
import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import type { ControlPlane } from '../../deploy/control-plane/control-plane.js';
import { LocalControlPlane } from '../../deploy/control-plane/local-control-plane.js';
import type { PgControlPlane } from '../../deploy/control-plane/pg-control-plane.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { ensureDefaultHosts, type DefaultHostsResult } from '../../deploy/registry/default-hosts.js';
import { Registry, type PublicHost } from '../../deploy/registry/registry.js';
import { bootDeploy, type BootDeployReport } from '../../deploy/publish/boot-deploy.js';
import type { DeployTarget } from '../../deploy/publish/deploy.js';
import { DeployWorker } from '../../deploy/releases/deploy-worker.js';
import { sweepDeployLeftovers } from '../../deploy/releases/sweep-leftovers.js';
import type { InstanceOptions } from './instance-options.js';

/** The deploy worker's heap: a deploy within every input limit needs a fraction of it. */
const DEPLOY_WORKER_MEMORY_MB = 256;

export interface OpenedRegistry {
  /** Reads (the request path): local SQLite, a replica of the control plane's in cluster mode. */
  registry: Registry;
  /** Writes: the local registry, or Postgres with DATABASE_URL. */
  controlPlane: ControlPlane;
  /** Cluster mode: the replica's sync, which tells the instance about others' changes. */
  sync: PgControlPlane['sync'] | null;
  publicHost: PublicHost;
  /** The default public host's key when this boot generated it (printed once); null otherwise. */
  generatedKey: string | null;
  deployWorker: DeployWorker;
  /** Deploys into the default public host (boot and `--watch`). */
  target: DeployTarget;
  /** Deploys `--apis` (null without it); the caller starts the cells meanwhile. */
  deployAtBoot(): Promise<BootDeployReport | null>;
}

/**
 * Opens the registry with its default hosts (in cluster mode: migrates the control plane and makes
 * the registry its replica) and readies the deploy worker; `deployAtBoot` deploys `--apis`.
 */
export async function openRegistry(
  options: InstanceOptions,
  log: InstanceLog,
  paths: DataPaths,
): Promise<OpenedRegistry> {
  mkdirSync(paths.tmpDir, { recursive: true });
  const registry = Registry.open(paths.registryFile);
  try {
    sweepDeployLeftovers(paths, registry, log);
    const defaults = {
      env: options.env,
      envExplicit: options.envExplicit,
      keyFromEnv: options.publicHostKey ?? undefined,
    };
    let controlPlane: ControlPlane;
    let sync: OpenedRegistry['sync'] = null;
    let hosts: DefaultHostsResult;
    if (options.databaseUrl === null) {
      controlPlane = new LocalControlPlane(registry);
      hosts = ensureDefaultHosts(registry, paths, defaults);
    } else {
      // Loaded only in cluster mode: one instance never loads the Postgres client.
      const { PgControlPlane } = await import('../../deploy/control-plane/pg-control-plane.js');
      const cluster = await PgControlPlane.start({ url: options.databaseUrl, registry, paths, log, defaults });
      ({ controlPlane, hosts } = cluster);
      sync = cluster.controlPlane.sync;
      log.info({}, 'cluster mode: the registry is a replica of the control plane in PostgreSQL (DATABASE_URL)');
    }
    const { publicHost, generatedKey } = hosts;
    const deployWorker = new DeployWorker({
      budgetMs: options.deployTimeoutMs,
      memoryMb: DEPLOY_WORKER_MEMORY_MB,
      postgres: options.databaseUrl !== null,
    });
    const target: DeployTarget = {
      controlPlane,
      paths,
      host: publicHost,
      worker: deployWorker,
      databaseUrl: options.databaseUrl,
    };
    const { apisDir } = options;
    const deployAtBoot = async () => (apisDir === null ? null : deployFolders(apisDir, target, options.publish, log));
    return { registry, controlPlane, sync, publicHost, generatedKey, deployWorker, target, deployAtBoot };
  } catch (error) {
    registry.close();
    throw error;
  }
}

async function deployFolders(
  apisDir: string,
  target: DeployTarget,
  publish: boolean,
  log: InstanceLog,
): Promise<BootDeployReport> {
  const boot = await bootDeploy(apisDir, target, publish);
  for (const bad of boot.invalid)
    log.error(
      { event: 'skipped', folder: bad.folder, errors: bad.errors },
      `API folder "${bad.folder}" is invalid and was skipped`,
    );
  return boot;
}
