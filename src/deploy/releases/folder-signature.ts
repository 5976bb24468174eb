import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RELEASE_ROOTS } from './folder-files.js';

/**
 * An API folder's release files as one string: each path with its size and modification time
 * ("" when the folder is gone). Two calls differ when a file that enters a release changed, came or
 * went: what watchers compare when Node's recursive watch on Linux misses an event (nodejs/node#48437).
 */
export function releaseFilesSignature(folder: string): string {
  if (!existsSync(folder)) return '';
  const parts: string[] = [];
  const visit = (path: string, shown: string) => {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      return;
    }
    if (!stat.isDirectory()) {
      parts.push(`${shown}:${stat.size}:${stat.mtimeMs}`);
      return;
    }
    for (const entry of readdirSync(path).sort()) visit(join(path, entry), `${shown}/${entry}`);
  };
  for (const root of RELEASE_ROOTS) visit(join(folder, root), root);
  return parts.join('\n');
}
