/** Reads the api.yaml at the root of an API folder (SPEC §2), refusing a file over 1 MiB. */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConfigError } from '../../shared/api-model/types.js';

export const API_YAML_MAX_BYTES = 1024 * 1024;

/** The text of `<dir>/api.yaml`, or null (with the reason pushed to `errors`) when it cannot be used. */
export async function readApiYaml(dir: string, errors: ConfigError[]): Promise<string | null> {
  const file = join(dir, 'api.yaml');
  const problem = (message: string) => errors.push({ file: 'api.yaml', line: 1, column: 1, label: null, message });
  try {
    const info = await stat(file);
    if (!info.isFile()) {
      problem('api.yaml is not a file');
      return null;
    }
    if (info.size > API_YAML_MAX_BYTES) {
      errors.push(tooLarge('api.yaml', info.size));
      return null;
    }
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      problem('api.yaml is missing: an API folder needs an api.yaml at its root');
    } else {
      problem(`cannot read api.yaml: ${(error as Error).message}`);
    }
    return null;
  }
}

/** The error for a file over {@link API_YAML_MAX_BYTES}; `size` when it is known. */
export function tooLarge(file: string, size?: number): ConfigError {
  const got = size === undefined ? '' : ` (${size} bytes)`;
  return { file, line: 1, column: 1, label: null, message: `${file} is larger than 1 MiB${got}` };
}
