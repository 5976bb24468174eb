import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { formatConfigError, type ConfigError } from '../shared/api-model/types.js';
import { envArgument } from './dotenv.js';
import { CliError, coloursFor, out, run } from './output.js';

/** A folder as the user should see it in messages: relative to the current directory when inside it. */
export function shownPath(folder: string): string {
  const rel = relative(process.cwd(), folder);
  return rel === '' ? '.' : rel.startsWith('..') ? folder : rel;
}

/** The envs an API folder is written for: each `Maps/<env>/` folder, or `dev` when it has none. */
function envsOf(folder: string): string[] {
  const maps = join(folder, 'Maps');
  const envs = existsSync(maps) ? readdirSync(maps).filter((name) => statSync(join(maps, name)).isDirectory()) : [];
  return envs.length > 0 ? envs.sort() : ['dev'];
}

export function checkApiFolder(folder: string): void {
  if (!existsSync(folder) || !statSync(folder).isDirectory())
    throw new CliError(`${shownPath(folder)} is not a folder`);
  if (!existsSync(join(folder, 'api.yaml')))
    throw new CliError(`${shownPath(folder)} has no api.yaml (is it an API folder? anvil create-api <name> makes one)`);
}

/**
 * Runs the server's own validation (the loader a deploy runs) for one env; the errors are
 * `<folder>/<file>:line:col [label] message`, so a terminal or an editor can jump to them.
 */
export async function validateFolder(
  folder: string,
  env: string,
): Promise<{ key: string | null; endpoints: string[]; errors: string[]; warnings: string[] }> {
  const { loadApiFolder } = await import('../deploy/api-yaml/load-api.js');
  const loaded = await loadApiFolder(folder, env);
  const prefix = shownPath(folder);
  const shown = (error: ConfigError) => join(prefix, formatConfigError(error));
  const warnings = loaded.warnings.map(shown);
  if (loaded.ok)
    return {
      key: loaded.definition.key,
      endpoints: loaded.definition.endpoints.map((e) => `${e.verb} ${e.path}`),
      errors: [],
      warnings,
    };
  return { key: null, endpoints: [], errors: loaded.errors.map(shown), warnings };
}

/** The type errors of the folder's TypeScript directives, each `<folder>/Directives/<file>:line:col message`. */
export async function typeErrors(folder: string): Promise<string[]> {
  const { typecheckDirectives } = await import('./typecheck-directives.js');
  // Not path.join: it would also normalise the message (a quoted https://x would lose a slash).
  return (await typecheckDirectives(folder)).map((error) => `${shownPath(folder)}/${error}`);
}

/** Warnings go to stderr, so that a script reading stdout (or `--json`) is not disturbed. */
export function printWarnings(warnings: readonly string[]): void {
  const c = coloursFor(process.stderr);
  for (const warning of warnings) process.stderr.write(`${c.yellow(c.bold('warning'))} ${warning}\n`);
}

export function registerValidate(program: Command): void {
  program
    .command('validate [dir]')
    .description(
      "Check an API folder with the server's own validation, and its TypeScript directives' types; every error with file, line, column and label.",
    )
    .option('--env <name>', 'validate for this env only (default: every env of Maps/, or dev)', envArgument)
    .option('--no-typecheck', 'skip the type check of the TypeScript directives (Directives/*.ts, tsc --strict)')
    .option('--json', 'print JSON for scripts', false)
    .addHelpText(
      'after',
      '\nExamples:\n  anvil validate            # the folder you are in\n  anvil validate orders --env pro\n',
    )
    .action((dir: string | undefined, flags: { env?: string; json: boolean; typecheck: boolean }) =>
      run(flags.json, async () => {
        const folder = resolve(dir ?? '.');
        checkApiFolder(folder);
        const written = envsOf(folder);
        // An env the folder has no Maps/<env>/ for, when it has some for others, is most likely a typo.
        if (flags.env !== undefined && !written.includes(flags.env) && existsSync(join(folder, 'Maps', written[0]!))) {
          throw new CliError(
            `${shownPath(folder)} has no Maps/${flags.env}/ folder: its envs are ${written.join(', ')}`,
            [
              `an env without its own Maps folder would run with Maps/*.json alone; create Maps/${flags.env}/ if that is what you want`,
            ],
          );
        }
        const envs = flags.env === undefined ? written : [flags.env];
        // error → the envs it shows in; an error of every env is shown once, without a tag.
        const found = new Map<string, string[]>();
        const warnings = new Set<string>();
        let key: string | null = null;
        for (const env of envs) {
          const result = await validateFolder(folder, env);
          key ??= result.key;
          for (const error of result.errors) found.set(error, [...(found.get(error) ?? []), env]);
          for (const warning of result.warnings) warnings.add(warning);
        }
        // Types do not depend on the env: checked once, shown without an env tag.
        for (const error of flags.typecheck ? await typeErrors(folder) : []) found.set(error, envs);
        if (!flags.json) printWarnings([...warnings]);
        if (found.size > 0) {
          const errors = [...found].map(([error, inEnvs]) =>
            inEnvs.length < envs.length ? `${error} (env ${inEnvs.join(', ')})` : error,
          );
          throw new CliError(`${shownPath(folder)} is not valid: ${errors.length} error(s)`, errors, {
            envs,
            warnings: [...warnings],
          });
        }
        if (flags.json) out.json({ ok: true, key, folder, envs, warnings: [...warnings] });
        else
          out.line(`${out.c.green('valid')} ${out.c.bold(key ?? '')} (${shownPath(folder)}, env ${envs.join(', ')})`);
      }),
    );
}
