import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** What a release is made of; anything else in an API folder is left out (SPEC §2). */
export const RELEASE_ROOTS = ['api.yaml', 'Directives', 'Maps', 'Assets'] as const;
const INCLUDED_TOP_LEVEL: ReadonlySet<string> = new Set(RELEASE_ROOTS);

/** The files of an API folder that belong to a release, as sorted `/`-separated relative paths. */
export async function releaseFileList(dir: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(current: string): Promise<void> {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      const rel = relative(dir, full).split(sep).join('/');
      if (current === dir && !INCLUDED_TOP_LEVEL.has(entry.name)) continue;
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) out.push(rel);
      // Links and special files never enter a release.
    }
  }
  await walk(dir);
  return out.sort();
}

/** A hash of the release's files and the env it is compiled for: same digest, same release. */
export async function releaseDigest(dir: string, files: readonly string[], env: string): Promise<string> {
  const hash = createHash('sha256').update(`env\0${env}\0`);
  for (const file of files) {
    const content = await readFile(join(dir, file));
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}
