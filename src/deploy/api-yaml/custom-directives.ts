/**
 * The custom directives of an API folder (SPEC §2, §7): the names of `Directives/<Name>.js|.ts`, with
 * an error for each file whose name is not valid, is taken by a built-in directive or comes twice.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConfigError } from '../../shared/api-model/types.js';

export const DIRECTIVE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Names of `Directives/*.js` and `Directives/*.ts` (not `*.d.ts`), with errors for bad or reserved
 * names; `files` maps each name to its file (`Directives/<file>`).
 */
export async function findCustomDirectives(
  dir: string,
  builtins: ReadonlyMap<string, unknown>,
): Promise<{ names: string[]; files: Map<string, string>; errors: ConfigError[]; php: string[] }> {
  const errors: ConfigError[] = [];
  let files: string[];
  try {
    const entries = await readdir(join(dir, 'Directives'), { withFileTypes: true });
    files = entries.filter((e) => e.isFile()).map((e) => e.name);
  } catch {
    return { names: [], files: new Map(), errors, php: [] };
  }
  files.sort();
  // The original's directives: never run here, named so the validator can say so.
  const php = files.filter((f) => f.endsWith('.php')).map((f) => f.slice(0, -'.php'.length));
  const seen = new Map<string, string>();
  for (const fileName of files) {
    const match = /^(.*)\.(js|ts)$/.exec(fileName);
    if (match === null || fileName.endsWith('.d.ts')) continue;
    const name = match[1] ?? '';
    const file = `Directives/${fileName}`;
    const problem = (message: string) => errors.push({ file, line: 1, column: 1, label: null, message });
    if (!DIRECTIVE_NAME.test(name)) {
      problem(
        `custom directive "${name}" has no valid name: a file name must be a letter or "_", then letters, digits or "_" (e.g. ReadUser.js)`,
      );
    } else if (builtins.has(name)) {
      problem(`custom directive "${name}" has the name of a built-in directive; rename ${file}`);
    } else if (seen.has(name)) {
      problem(`custom directive "${name}" is defined twice (${seen.get(name)} and ${file})`);
    } else {
      seen.set(name, file);
    }
  }
  return { names: [...seen.keys()].sort(), files: seen, errors, php };
}
