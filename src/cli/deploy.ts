import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { deployTarget, envArgument } from './dotenv.js';
import { CliError, formatBytes, out, run } from './output.js';
import { checkApiFolder, printWarnings, shownPath, typeErrors, validateFolder } from './validate.js';

/** `deploy [DIR] <ENV>`: one argument is the env (the folder is `.`), two are folder and env. */
function folderAndEnv(args: string[]): { folder: string; env: string } {
  if (args.length === 1) {
    // `anvil deploy notes`: a folder named where the env goes (the env was left out).
    if (!existsSync(resolve('api.yaml')) && existsSync(join(resolve(args[0]!), 'api.yaml'))) {
      throw new CliError(`deploy needs the env to deploy to: ${args[0]} is an API folder, not an env`, [
        `e.g. anvil deploy ${args[0]} dev`,
      ]);
    }
    return { folder: resolve('.'), env: envArgument(args[0]!) };
  }
  if (args.length === 2) return { folder: resolve(args[0]!), env: envArgument(args[1]!) };
  throw new CliError(`deploy takes [DIR] <ENV>, got ${args.length} argument(s)`, ['e.g. anvil deploy orders dev']);
}

/**
 * A deploy to a key that serves another API (none of the same endpoints: a folder made with
 * `create-api` under a name the host already uses, say) would silently take its place and, once
 * published, its traffic and its data: it is refused unless asked for with --replace.
 */
function refuseReplacing(key: string, local: readonly string[], current: readonly string[] | null, env: string): void {
  if (current === null || current.length === 0) return;
  const mine = local.filter((endpoint) => !endpoint.startsWith('all '));
  if (mine.length === 0 || mine.some((endpoint) => current.includes(endpoint))) return;
  const list = (endpoints: readonly string[]) =>
    [...endpoints].sort().slice(0, 5).join(', ') + (endpoints.length > 5 ? `, … (${endpoints.length} in all)` : '');
  throw new CliError(`${key} already exists in ${env} and serves another API: nothing was sent`, [
    `it serves ${list(current)}`,
    `this folder serves ${list(mine)}`,
    `to replace it, deploy again with --replace (its releases stay for anvil rollback); to keep it, give this folder another key: in api.yaml`,
  ]);
}

/** `--test`: the folder's tests, for the env deployed to; a failure sends nothing. */
async function testBeforeDeploy(folder: string, env: string, json: boolean): Promise<void> {
  const { testFolder } = await import('./test.js');
  try {
    await testFolder(folder, { env, reporter: 'human' }, json ? process.stderr : process.stdout);
  } catch (error) {
    if (error instanceof CliError)
      throw new CliError(`${error.message}: nothing was sent`, error.details, error.fields);
    throw error;
  }
}

export function registerDeploy(program: Command): void {
  program
    .command('deploy')
    .argument('<dir-and-env...>', 'the API folder (default: the current one) and the env to deploy to')
    .usage('[DIR] <ENV> [options]')
    .description(
      'Validate an API folder, pack it (api.yaml, Directives, Maps, Assets) and deploy it as a new, private release.',
    )
    .option('--no-typecheck', 'skip the type check of the TypeScript directives (Directives/*.ts, tsc --strict)')
    .option('--test', "run the folder's tests (anvil test) first, and send nothing when one fails", false)
    .option('--replace', "deploy even when the key already serves an API with none of this folder's endpoints", false)
    .option('--json', 'print JSON for scripts', false)
    .addHelpText(
      'after',
      `
The target comes from .env in the current directory, or the environment (which wins):
  DEPLOY_ENDPOINT_<ENV>  the management API, e.g. http://admin.localhost:8080/anvil/api
  PUBLIC_HOST_<ENV>      the public host to deploy into, e.g. localhost
  API_KEY_<ENV>          that host's key
Names under .localhost reach this machine without /etc/hosts.

Example:
  anvil deploy orders dev && anvil publish orders dev
`,
    )
    .action((args: string[], flags: { json: boolean; replace: boolean; test: boolean; typecheck: boolean }) =>
      run(flags.json, async () => {
        const { folder, env } = folderAndEnv(args);
        checkApiFolder(folder);
        const target = deployTarget(env);
        const local = await validateFolder(folder, env);
        if (!flags.json) printWarnings(local.warnings);
        if (flags.typecheck) local.errors.push(...(await typeErrors(folder)));
        if (local.errors.length > 0) {
          throw new CliError(
            `${shownPath(folder)} is not valid (nothing was sent): ${local.errors.length} error(s)`,
            local.errors,
          );
        }
        if (flags.test) await testBeforeDeploy(folder, env, flags.json);
        const [{ packApiFolder }, { withClient }] = await Promise.all([
          import('../deploy/releases/pack.js'),
          import('./management-client.js'),
        ]);
        const { archive, files } = await packApiFolder(folder);
        const { c } = out;
        if (!flags.json)
          out.line(
            c.dim(
              `deploying ${local.key} (${files.length} files, ${formatBytes(archive.length)}) to ${target.publicHost} via ${target.endpoint}`,
            ),
          );
        const { deployed, record } = await withClient(target, async (client) => {
          if (!flags.replace) refuseReplacing(local.key!, local.endpoints, await client.findEndpoints(local.key!), env);
          const deployed = await client.deploy(archive);
          return { deployed, record: await client.getApi(deployed.key) };
        });
        if (flags.json) {
          out.json({
            ok: true,
            key: deployed.key,
            release: deployed.release,
            env,
            publicHost: target.publicHost,
            active: record.active,
            public: record.public,
            files,
          });
          return;
        }
        // A new release of a published API serves at once; a first deploy stays private until published.
        const reach =
          record.active && record.public
            ? 'public: serving now'
            : `private; anvil publish ${deployed.key} ${env} makes it public`;
        out.line(`${c.green('deployed')} ${c.bold(deployed.key)} release ${c.cyan(deployed.release)} (${reach})`);
      }),
    );
}
