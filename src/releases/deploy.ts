import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DataPaths } from '../config/data-paths.js';
import { loadApiFolder } from '../config/load-api.js';
import { formatConfigError, type CompiledRelease } from '../config/types.js';
import { newReleaseId } from '../registry/release-id.js';
import type { PublicHost, Registry } from '../registry/registry.js';
import { releaseDigest, releaseFileList } from './folder-files.js';

export type DeployResult =
  | { ok: true; key: string; release: string; created: boolean }
  | { ok: false; status: 400; errors: string[] };

export interface DeployTarget {
  registry: Registry;
  paths: DataPaths;
  host: PublicHost;
}

/**
 * Deploys an API folder into a public host: validate everything (all errors at once), then store a
 * new release (files + compiled.json) and make it the API's current one — or, with `reuseUnchanged`
 * (boot deploys), keep the current release when the same files were deployed for this env already.
 * Releases beyond the kept ones are deleted from disk.
 */
export async function deployFolder(sourceDir: string, target: DeployTarget, options: { reuseUnchanged: boolean }): Promise<DeployResult> {
  const { registry, paths, host } = target;
  const loaded = await loadApiFolder(sourceDir, host.env);
  if (!loaded.ok) return { ok: false, status: 400, errors: loaded.errors.map(formatConfigError) };
  const key = loaded.definition.key;

  const files = await releaseFileList(sourceDir);
  const digest = await releaseDigest(sourceDir, files, host.env);
  const current = registry.getApi(host.name, key);
  if (options.reuseUnchanged && current !== null && registry.currentDigest(host.name, key) === digest) {
    return { ok: true, key, release: current.release, created: false };
  }

  const release = newReleaseId();
  const filesDir = paths.releaseFiles(host.name, key, release);
  for (const file of files) {
    const destination = join(filesDir, file);
    await mkdir(dirname(destination), { recursive: true });
    await copyFile(join(sourceDir, file), destination);
  }
  const compiled: CompiledRelease = {
    format: 1,
    key,
    host: host.name,
    env: host.env,
    release,
    createdAt: new Date().toISOString(),
    digest,
    definition: loaded.definition,
    maps: loaded.maps,
    customDirectives: loaded.customDirectives,
    directiveCode: loaded.directiveCode,
  };
  await writeFile(paths.compiledFile(host.name, key, release), JSON.stringify(compiled));

  const { pruned } = registry.recordRelease(host.name, key, release, digest);
  await Promise.all(pruned.map((old) => rm(paths.releaseDir(host.name, key, old), { recursive: true, force: true })));
  return { ok: true, key, release, created: true };
}
