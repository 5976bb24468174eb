import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The project's apis/ folder: the example APIs `npm start` deploys. */
export const EXAMPLE_APIS = join(import.meta.dirname, '../../apis');

/** Each example API, folder name → its path (every sub-folder of apis/ with an api.yaml). */
export function exampleApis(): Record<string, string> {
  const names = readdirSync(EXAMPLE_APIS, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(EXAMPLE_APIS, entry.name, 'api.yaml')))
    .map((entry) => entry.name);
  return Object.fromEntries(names.map((name) => [name, join(EXAMPLE_APIS, name)]));
}
