import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerBench } from './bench.js';
import { registerCreateApi } from './create-api.js';
import { registerDeploy } from './deploy.js';
import { registerDev } from './dev.js';
import { registerHosts } from './hosts.js';
import { registerInspect } from './inspect.js';
import { runWithIsolateFlags } from './isolate-process.js';
import { registerJobs } from './jobs.js';
import { registerLogCommands } from './log-commands.js';
import { registerOpenApi } from './openapi.js';
import { registerReleaseCommands } from './release-commands.js';
import { registerStart } from './start.js';
import { registerTest } from './test.js';
import { registerValidate } from './validate.js';

// A reader that stops early (`anvil test --reporter tap | head`) closes the pipe: that is not an error of the command.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

await runWithIsolateFlags(process.argv);

const program = new Command();
program
  .name('anvil')
  .description('Anvil hosts many small declarative HTTP APIs on one host, each isolated in its own actor.')
  .version(packageVersion(), '-V, --version', 'print the version')
  .addHelpText(
    'after',
    `
The developer's loop:
  anvil create-api orders          a working API folder
  anvil validate orders            the server's checks, locally
  anvil test orders                its tests (tests/*.yaml), in this process
  anvil deploy orders dev          a new private release (target from .env: DEPLOY_ENDPOINT_DEV, …)
  anvil publish orders dev         active and public
  anvil rollback orders dev        back to the release before
`,
  );
registerStart(program);
registerCreateApi(program);
registerValidate(program);
registerTest(program);
registerInspect(program);
registerDeploy(program);
registerDev(program);
registerReleaseCommands(program);
registerHosts(program);
registerJobs(program);
registerLogCommands(program);
registerBench(program);
registerOpenApi(program);
usageAfterErrors(program);

/** The version of the package this command comes from. */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** A usage mistake prints its message and one usage line (and where the rest is), not the whole help. */
function usageAfterErrors(command: Command, parents = ''): void {
  const name = `${parents}${command.name()}`;
  command.showHelpAfterError(`usage: ${name} ${command.usage()}  (${name} --help for more)`);
  for (const sub of command.commands) usageAfterErrors(sub, `${name} `);
}

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`anvil: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
