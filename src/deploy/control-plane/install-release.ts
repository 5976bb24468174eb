import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { COMPILED_FILE, RELEASE_FILES_DIR, type DataPaths } from '../api-yaml/data-paths.js';
import type { CompiledRelease } from '../../shared/api-model/types.js';
import { Errors } from '../../shared/errors.js';
import { releaseDigest, releaseFileList } from '../releases/folder-files.js';
import { unpackTarGz } from '../releases/unpack.js';
import { defaultUnpackLimits } from '../releases/upload-limits.js';
import { readReleaseFiles } from './pg-reads.js';

/** A release's unpacked files, at most (the deploying instance held them to its --upload-limit already). */
const MAX_UNPACKED_BYTES = 1024 * 1024 * 1024;

export interface ReleaseRef {
  host: string;
  key: string;
  release: string;
}

/**
 * Puts a release another instance deployed into this instance's release cache: fetched by digest
 * from the control plane, unpacked with the same hostile-archive unpacker as an upload, its digest
 * checked against the files, then moved into place in one rename (a half-written release is never
 * at its place).
 */
export async function installRelease(pool: pg.Pool, paths: DataPaths, ref: ReleaseRef): Promise<void> {
  const name = `${ref.host}/${ref.key}/${ref.release}`;
  const row = await readReleaseFiles(pool, ref.host, ref.key, ref.release);
  if (row === null) throw Errors.controlPlaneRelease(name, 'it is no longer in the control plane');
  const compiled = JSON.parse(row.compiled) as CompiledRelease;
  if (compiled.key !== ref.key || compiled.release !== ref.release || compiled.digest !== row.digest) {
    throw Errors.controlPlaneRelease(name, 'its compiled.json names another release');
  }
  await mkdir(paths.tmpDir, { recursive: true });
  const workDir = await mkdtemp(join(paths.tmpDir, 'fetch-'));
  try {
    const limits = { ...defaultUnpackLimits, maxUploadBytes: row.archive.length, maxUnpackedBytes: MAX_UNPACKED_BYTES };
    const unpacked = await unpackTarGz(row.archive, join(workDir, 'unpacked'), limits);
    if (!unpacked.ok) throw Errors.controlPlaneRelease(name, unpacked.errors.join('; '));
    const digest = await releaseDigest(unpacked.root, await releaseFileList(unpacked.root), compiled.env);
    if (digest !== row.digest)
      throw Errors.controlPlaneRelease(name, `its files have digest ${digest}, not ${row.digest}`);

    const staged = join(workDir, 'release');
    await mkdir(staged);
    await rename(unpacked.root, join(staged, RELEASE_FILES_DIR));
    await writeFile(join(staged, COMPILED_FILE), row.compiled);
    await mkdir(paths.apiReleasesDir(ref.host, ref.key), { recursive: true });
    await rename(staged, paths.releaseDir(ref.host, ref.key, ref.release)).catch((error: NodeJS.ErrnoException) => {
      // Placed meanwhile (by this instance's own deploy): the same release, keep it.
      if (error.code !== 'EEXIST' && error.code !== 'ENOTEMPTY') throw error;
    });
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
