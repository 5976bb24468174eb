/**
 * Everything a deploy does with the tenant's bytes, in the deploy worker (deploy-worker.ts): unpack
 * an upload, read and validate the folder (api.yaml, Maps, custom directives compiled), and stage
 * the release — its files and compiled.json — in the deploy's work folder. The router then only
 * records it (deploy.ts).
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { COMPILED_FILE, RELEASE_FILES_DIR } from '../api-yaml/data-paths.js';
import { MAX_LISTED_ERRORS } from '../../shared/api-model/input-limits.js';
import { loadApiFolder } from '../api-yaml/load-api.js';
import { formatConfigError, type CompiledRelease } from '../../shared/api-model/types.js';
import { releaseDigest, releaseFileList } from './folder-files.js';
import { keepsLocalState } from './local-state.js';
import { packApiFolder } from './pack.js';
import type { ReceivedUpload } from './receive-upload.js';
import { unpackReceived } from './read-upload.js';
import type { Refusal, UnpackLimits } from './upload-limits.js';

export type ReleaseSource =
  | { kind: 'folder'; dir: string }
  | { kind: 'upload'; upload: Pick<ReceivedUpload, 'file' | 'contentType' | 'multipart'>; limits: UnpackLimits };

export interface StageTask {
  source: ReleaseSource;
  /** This deploy's own scratch folder: the unpacked upload and the staged release go in it. */
  workDir: string;
  host: string;
  env: string;
  release: string;
  /** Also pack the release's files as a .tar.gz (cluster mode: other instances fetch it). */
  pack?: boolean;
  /** Whether the instance has the cluster's Postgres (DATABASE_URL), which `database: postgres` needs. */
  postgres: boolean;
}

export type StageResult =
  | {
      ok: true;
      key: string;
      digest: string;
      /** Holds `files/` and `compiled.json`, as a release folder does. */
      releaseDir: string;
      /** With `pack`. */
      archiveFile?: string;
      /** api.yaml says `database: postgres`. */
      postgres: boolean;
    }
  | Refusal;

export async function stageRelease(task: StageTask): Promise<StageResult> {
  let root: string;
  if (task.source.kind === 'upload') {
    const unpacked = await unpackReceived(task.source.upload, join(task.workDir, 'unpacked'), task.source.limits);
    if (!unpacked.ok) return unpacked;
    root = unpacked.root;
  } else {
    root = task.source.dir;
  }

  const loaded = await loadApiFolder(root, task.env, undefined, { postgres: task.postgres });
  if (!loaded.ok) return { ok: false, status: 400, errors: listed(loaded.errors.map(formatConfigError)) };
  const key = loaded.definition.key;
  const files = await releaseFileList(root);
  const digest = await releaseDigest(root, files, task.env);

  const releaseDir = join(task.workDir, 'release');
  for (const file of files) {
    const destination = join(releaseDir, RELEASE_FILES_DIR, file);
    await mkdir(dirname(destination), { recursive: true });
    await copyFile(join(root, file), destination);
  }
  const compiled: CompiledRelease = {
    format: 1,
    key,
    host: task.host,
    env: task.env,
    release: task.release,
    createdAt: new Date().toISOString(),
    digest,
    definition: loaded.definition,
    maps: loaded.maps,
    customDirectives: loaded.customDirectives,
    directiveCode: loaded.directiveCode,
    directiveMaps: loaded.directiveMaps,
    localState: keepsLocalState(loaded.definition, loaded.customDirectives),
  };
  await mkdir(releaseDir, { recursive: true });
  await writeFile(join(releaseDir, COMPILED_FILE), JSON.stringify(compiled));
  const postgres = loaded.definition.database === 'postgres';
  if (task.pack !== true) return { ok: true, key, digest, releaseDir, postgres };
  const archiveFile = join(task.workDir, 'release-files.tar.gz');
  await writeFile(archiveFile, (await packApiFolder(join(releaseDir, RELEASE_FILES_DIR))).archive);
  return { ok: true, key, digest, releaseDir, archiveFile, postgres };
}

/** The first {@link MAX_LISTED_ERRORS} errors, and a line counting the others. */
function listed(errors: string[]): string[] {
  if (errors.length <= MAX_LISTED_ERRORS) return errors;
  return [...errors.slice(0, MAX_LISTED_ERRORS), `... and ${errors.length - MAX_LISTED_ERRORS} more errors`];
}
