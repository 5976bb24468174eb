import type { IncomingMessage } from 'node:http';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { COMPILED_FILE, type DataPaths } from '../api-yaml/data-paths.js';
import { Errors } from '../../shared/errors.js';
import { DEPLOY_QUEUE_RETRY_AFTER_S } from '../../shared/errors/catalogue.js';
import { discardBody } from '../../shared/http/body.js';
import { newReleaseId } from '../registry/release-id.js';
import type { PublicHost } from '../registry/registry.js';
import type { DeployAdmission } from '../releases/deploy-admission.js';
import type { DeployWorker } from '../releases/deploy-worker.js';
import { receiveUpload } from '../releases/receive-upload.js';
import type { ReleaseSource } from '../releases/stage-release.js';
import type { Refusal, UnpackLimits } from '../releases/upload-limits.js';

/** 503: the cluster's Postgres could not make the schema and role of a `database: postgres` API. */
export type Unavailable = { ok: false; status: 503; errors: string[] };
/** 429: the host has its bound of deploys under way (deploy-admission.ts); the body is neither stored nor handed to the deploy worker. */
export type Busy = { ok: false; status: 429; errors: string[]; code: string; retryAfterSeconds: number };
export type DeployResult = { ok: true; key: string; release: string; created: boolean } | Refusal | Unavailable | Busy;

export interface DeployTarget {
  controlPlane: ControlPlane;
  paths: DataPaths;
  host: PublicHost;
  worker: DeployWorker;
  /** The cluster's Postgres (DATABASE_URL): an API with `database: postgres` gets its schema and role there at deploy. */
  databaseUrl?: string | null;
  /** The bound on each host's uploaded deploys under way (boot deploys are not counted). */
  admission?: DeployAdmission;
}

/**
 * Deploys an API folder into a public host: validate everything (all errors at once), then store a
 * new release (files + compiled.json) and make it the API's current one — or, with `reuseUnchanged`
 * (boot deploys), keep the current release when the same files were deployed for this env already.
 * Releases beyond the kept ones are deleted from disk.
 */
export function deployFolder(
  dir: string,
  target: DeployTarget,
  options: { reuseUnchanged: boolean },
): Promise<DeployResult> {
  return inWorkDir(target.paths, (workDir) => deploy({ kind: 'folder', dir }, workDir, target, options));
}

/** `POST /anvil/api`: receives the archive (bytes only, here), then deploys it like a folder; always a new release. */
export async function deployUpload(
  req: IncomingMessage,
  limits: UnpackLimits,
  target: DeployTarget,
): Promise<DeployResult> {
  const leave = target.admission === undefined ? () => {} : target.admission.enter(target.host.name);
  if (leave === null) return busy(req, limits, target.admission!.maxPerHost);
  try {
    return await inWorkDir(target.paths, async (workDir) => {
      const received = await receiveUpload(req, join(workDir, 'upload'), limits);
      if (!received.ok) return received;
      return deploy({ kind: 'upload', upload: received, limits }, workDir, target, { reuseUnchanged: false });
    });
  } finally {
    leave();
  }
}

/** The refusal of a deploy over the host's bound; the body is read and thrown away (see receive-upload.ts on draining). */
function busy(req: IncomingMessage, limits: UnpackLimits, maxPerHost: number): Busy {
  discardBody(req, Math.max(2 * limits.maxUploadBytes, 1024 * 1024));
  const error = Errors.deployQueueFull(maxPerHost);
  return {
    ok: false,
    status: 429,
    errors: [error.message],
    code: error.code,
    retryAfterSeconds: DEPLOY_QUEUE_RETRY_AFTER_S,
  };
}

/**
 * The deploy worker reads, validates and stages the release in `workDir`; the router's part is to
 * move the staged folder into place and record it.
 */
async function deploy(
  source: ReleaseSource,
  workDir: string,
  target: DeployTarget,
  options: { reuseUnchanged: boolean },
): Promise<DeployResult> {
  const { controlPlane, paths, host } = target;
  const release = newReleaseId();
  const pack = controlPlane.sharesReleaseFiles;
  const staged = await target.worker.run({ source, workDir, host: host.name, env: host.env, release, pack });
  if (!staged.ok) return staged;
  const { key, digest } = staged;
  if (staged.postgres && target.databaseUrl) {
    const refused = await provisionAtDeploy(target.databaseUrl, host, key);
    if (refused !== null) return refused;
  }
  const shared = pack
    ? {
        archive: await readFile(staged.archiveFile!),
        compiled: await readFile(join(staged.releaseDir, COMPILED_FILE), 'utf8'),
      }
    : null;

  // In place before it is recorded: a recorded release is served at once. Unrecorded, it goes.
  const releaseDir = paths.releaseDir(host.name, key, release);
  await mkdir(paths.apiReleasesDir(host.name, key), { recursive: true });
  await rename(staged.releaseDir, releaseDir);
  let recorded;
  try {
    recorded = await controlPlane.recordRelease({
      host: host.name,
      key,
      release,
      digest,
      reuseUnchanged: options.reuseUnchanged,
      shared,
    });
  } catch (error) {
    await rm(releaseDir, { recursive: true, force: true });
    throw error;
  }
  if (!recorded.created) await rm(releaseDir, { recursive: true, force: true });
  await Promise.all(
    recorded.pruned.map((old) => rm(paths.releaseDir(host.name, key, old), { recursive: true, force: true })),
  );
  return { ok: true, key, release: recorded.release, created: recorded.created };
}

/** The API's schema and role, made at its first deploy (idempotent: later deploys only look them up). */
async function provisionAtDeploy(databaseUrl: string, host: PublicHost, key: string): Promise<Unavailable | null> {
  try {
    // The Postgres client is loaded only for such an API: one instance never loads it.
    const { provisionApi } = await import('../../directives/database/postgres/pg-provision.js');
    await provisionApi(databaseUrl, { host: host.name, env: host.env, key });
    return null;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      status: 503,
      errors: [`database: postgres: the API's schema and role could not be made in the cluster's Postgres (${why})`],
    };
  }
}

/** Runs `fn` with a fresh folder under the data directory's tmp (same file system as the releases), removed afterwards. */
async function inWorkDir<T>(paths: DataPaths, fn: (workDir: string) => Promise<T>): Promise<T> {
  try {
    await mkdir(paths.tmpDir, { recursive: true });
    const workDir = await mkdtemp(join(paths.tmpDir, 'deploy-'));
    try {
      return await fn(workDir);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  } catch (error) {
    throw onFullDisk(error);
  }
}

/** A full disk says so (507), whichever step of the deploy ran into it; nothing of the release is kept. */
function onFullDisk(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' ? Errors.diskFull('the release could not be stored') : error;
}
