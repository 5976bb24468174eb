import { create } from 'tar';
import { releaseFileList } from './folder-files.js';

export interface PackedFolder {
  /** The `.tar.gz` bytes. */
  archive: Buffer;
  /** The files in it (`/`-separated, sorted): exactly those that enter a release. */
  files: string[];
}

/**
 * Packs an API folder as the `.tar.gz` that `POST /anvil/api` takes: only the files that enter a
 * release (api.yaml, Directives/, Maps/, Assets/; no links, no special files), at the archive's
 * top, without owner names, ids or other details of this machine (node-tar's `portable`).
 */
export async function packApiFolder(dir: string): Promise<PackedFolder> {
  const files = await releaseFileList(dir);
  const chunks: Buffer[] = [];
  const stream = create({ gzip: true, cwd: dir, portable: true, follow: false, noDirRecurse: true }, files);
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return { archive: Buffer.concat(chunks), files };
}
