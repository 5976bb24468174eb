import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { API_KEY, RESERVED_KEYS } from '../deploy/api-yaml/api-key.js';
import { CliError, out, run } from './output.js';
import { schemaModeline } from './templates/schema-modeline.js';
import { skeletonFiles } from './templates/skeleton.js';
import { shownPath } from './validate.js';

interface CreateFlags {
  dir: string;
  force: boolean;
  json: boolean;
}

/** The folder must not exist, or be empty, unless `--force` (which rewrites only the skeleton's own files). */
function checkTarget(folder: string, force: boolean): void {
  if (!existsSync(folder)) return;
  if (!statSync(folder).isDirectory()) throw new CliError(`${shownPath(folder)} exists and is not a folder`);
  if (readdirSync(folder).length > 0 && !force) {
    throw new CliError(`${shownPath(folder)} already exists and is not empty`, [
      'use --force to write the skeleton over it (files of the skeleton are replaced, others are kept)',
    ]);
  }
}

export function registerCreateApi(program: Command): void {
  program
    .command('create-api <name>')
    .description(
      'Create a working API folder: api.yaml with a /ping endpoint, a custom directive, Maps for dev and pro, a migration.',
    )
    .option('--dir <parent>', 'folder to create it in', '.')
    .option('--force', 'write over an existing, non-empty folder', false)
    .option('--json', 'print JSON for scripts', false)
    .addHelpText('after', '\nExample:\n  anvil create-api orders && anvil validate orders\n')
    .action((name: string, flags: CreateFlags) =>
      run(flags.json, () => {
        if (!API_KEY.test(name) || RESERVED_KEYS.has(name)) {
          throw new CliError(
            `"${name}" is not a valid API name: use 1 to 63 lower-case letters, digits and "-", starting with a letter or digit (e.g. orders, user-profiles); "anvil" is reserved`,
          );
        }
        const folder = resolve(flags.dir, name);
        checkTarget(folder, flags.force);
        const files = skeletonFiles(name);
        files['api.yaml'] = `${schemaModeline(folder)}${files['api.yaml'] ?? ''}`;
        for (const [file, content] of Object.entries(files)) {
          const path = join(folder, file);
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, content);
        }
        const shown = shownPath(folder);
        if (flags.json) {
          out.json({ ok: true, key: name, folder, files: Object.keys(files).sort() });
          return;
        }
        const { c } = out;
        out.line(`${c.green('created')} ${c.bold(shown)}/`);
        for (const file of Object.keys(files).sort()) out.line(`  ${file}`);
        out.line('');
        out.line('next:');
        out.line(`  anvil validate ${shown}`);
        out.line(`  anvil test ${shown}`);
        out.line(`  anvil deploy ${shown} dev`);
      }),
    );
}
