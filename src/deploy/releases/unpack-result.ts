import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

export type UnpackResult =
  | { ok: true; root: string; files: number; bytes: number } // root = directory that contains api.yaml
  | { ok: false; status: 400 | 413 | 415; errors: string[] };

export const NO_API_YAML_ERROR = 'the archive has no api.yaml at its top level (or in a single top-level folder)';

/** The directory of the unpacked api.yaml: `dest` itself, or its only child directory. */
export async function findApiRoot(dest: string): Promise<string | undefined> {
  const top = await readdir(dest, { withFileTypes: true });
  if (top.some((d) => d.name === 'api.yaml' && d.isFile())) return dest;
  const only = top[0];
  if (top.length === 1 && only !== undefined && only.isDirectory()) {
    const inner = path.join(dest, only.name);
    const st = await lstat(path.join(inner, 'api.yaml')).catch(() => undefined);
    if (st?.isFile()) return inner;
  }
  return undefined;
}
