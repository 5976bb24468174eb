import { Command } from 'commander';
import { registerHosts } from './hosts.js';
import { registerJobs } from './jobs.js';
import { registerStart } from './start.js';

const program = new Command();
program
  .name('anvil')
  .description('Anvil hosts many small declarative HTTP APIs on one host, each isolated in its own actor.')
  .showHelpAfterError();
registerStart(program);
registerHosts(program);
registerJobs(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`anvil: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
