import { mkdirSync } from 'node:fs';
import type { DataPaths } from '../config/data-paths.js';
import type { InstanceLog } from '../logs/instance-log.js';
import { ensureDefaultHosts } from '../registry/default-hosts.js';
import { Registry, type PublicHost } from '../registry/registry.js';
import { bootDeploy, type BootDeployReport } from '../releases/boot-deploy.js';
import type { DeployTarget } from '../releases/deploy.js';
import { DeployWorker } from '../releases/deploy-worker.js';
import { sweepDeployLeftovers } from '../releases/sweep-leftovers.js';
import type { InstanceOptions } from './instance-options.js';

/** The deploy worker's heap: a deploy within every input limit needs a fraction of it. */
const DEPLOY_WORKER_MEMORY_MB = 256;

export interface OpenedRegistry {
  registry: Registry;
  publicHost: PublicHost;
  /** The default public host's key when this boot generated it (printed once); null otherwise. */
  generatedKey: string | null;
  deployWorker: DeployWorker;
  /** Deploys into the default public host (boot and `--watch`). */
  target: DeployTarget;
  boot: BootDeployReport | null;
}

/** Opens the registry with its default hosts, starts the deploy worker, and deploys `--apis`. */
export async function openRegistry(options: InstanceOptions, log: InstanceLog, paths: DataPaths): Promise<OpenedRegistry> {
  mkdirSync(paths.tmpDir, { recursive: true });
  const registry = Registry.open(paths.registryFile);
  sweepDeployLeftovers(paths, registry, log);
  const { publicHost, generatedKey } = ensureDefaultHosts(registry, paths, {
    env: options.env,
    envExplicit: options.envExplicit,
    keyFromEnv: options.publicHostKey ?? undefined,
  });
  const deployWorker = new DeployWorker({ budgetMs: options.deployTimeoutMs, memoryMb: DEPLOY_WORKER_MEMORY_MB, postgres: options.databaseUrl !== null });
  const target: DeployTarget = { registry, paths, host: publicHost, worker: deployWorker, databaseUrl: options.databaseUrl };
  const boot = options.apisDir === null ? null : await deployAtBoot(options.apisDir, target, options.publish, log);
  return { registry, publicHost, generatedKey, deployWorker, target, boot };
}

async function deployAtBoot(apisDir: string, target: DeployTarget, publish: boolean, log: InstanceLog): Promise<BootDeployReport> {
  const boot = await bootDeploy(apisDir, target, publish);
  for (const bad of boot.invalid) log.error({ folder: bad.folder, errors: bad.errors }, `API folder "${bad.folder}" is invalid and was skipped`);
  return boot;
}
