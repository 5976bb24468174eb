import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { InstanceOptions, StartedInstance } from '../front/instance/instance-options.js';
import { addStartFlags, readStartValues, variablesHelp } from './start-command.js';
import { instanceOptions } from './start-options.js';

export function registerStart(program: Command): void {
  addStartFlags(program.command('start'))
    .description('Start an instance: the router, its cells, and the APIs of the registry (and of --apis).')
    .addHelpText('after', ({ command }) => variablesHelp(command))
    .addHelpText(
      'after',
      '\nEvery option can also be set by its environment variable, e.g. ANVIL_PORT=9000 or ANVIL_MAX_THREADS=4;\nthe command line wins.\n\nExample:\n  anvil start --apis apis --publish --port 8080\n',
    )
    .action(async (_flags: unknown, command: Command) => {
      // The environment is read here, once: the instance gets it as options.
      const values = readStartValues(command);
      await start(instanceOptions(values, command.getOptionValueSource('env') !== 'default'), values.logLevel);
    });
}

async function start(options: InstanceOptions, logLevel: string): Promise<void> {
  // Loaded here, not at the top: every other command starts without the router's modules.
  const [{ createInstanceLog }, { startInstance }] = await Promise.all([
    import('../shared/logs/instance-log.js'),
    import('../front/instance/start-instance.js'),
  ]);
  const log = createInstanceLog(logLevel);
  // Taken before the instance starts: it answers (health included) before startInstance
  // resolves, and a SIGTERM in between must drain it, not kill it with its lock left behind.
  let started: ReturnType<typeof startInstance> | null = null;
  const shutdown = (signal: string) => {
    log.info({ signal }, 'draining');
    started!
      .then((instance) => instance.stop())
      .then(
        () => {
          log.info('stopped');
          process.exit(0);
        },
        (error: unknown) => {
          log.error({ error: String(error) }, 'stop failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  started = startInstance(options, log);
  let instance: StartedInstance;
  try {
    instance = await started;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    const { portHolder } = await import('./port-holder.js');
    const holder = portHolder(options.port);
    throw new Error(
      `port ${options.port} on ${options.listen} is already in use${holder === null ? '' : ` by ${holder}`}: stop it, or choose another port with --port (or ANVIL_PORT)`,
    );
  }

  log.info({ port: instance.port, listen: options.listen, cells: options.cells }, 'listening');
  process.stderr.write(banner(options, instance));
}

/** What a person starting the instance reads on stderr: where it serves, the hosts, the boot deploys. */
function banner(options: InstanceOptions, instance: StartedInstance): string {
  const origin = (host: string) => `http://${host}:${instance.port}`;
  const keyFile = resolve(options.dataDir, '.anvil/public-host-key');
  const lines = [
    '',
    `Anvil is serving on ${options.listen}:${instance.port} (${options.cells} cells, env ${instance.publicHost.env}).`,
    `  public host  ${origin(instance.publicHost.name)}/<api>/…`,
    `  admin host   ${origin(instance.adminHost)}/anvil/api   (headers public-host: ${instance.publicHost.name}, public-host-key: <key>)`,
    instance.generatedKey !== null
      ? `  public host key (shown once, stored in ${keyFile}): ${instance.generatedKey}`
      : `  public host key: ${options.publicHostKey !== null ? 'from ANVIL_PUBLIC_HOST_KEY' : `in ${keyFile}`}`,
  ];
  for (const api of instance.boot?.deployed ?? [])
    lines.push(
      `  api ${api.key.padEnd(20)} ${origin(instance.publicHost.name)}/${api.key}/   release ${api.release}${api.created ? ' (new)' : ''}`,
    );
  for (const bad of instance.boot?.invalid ?? [])
    lines.push(`  skipped ${bad.folder}: ${bad.errors.length} error(s), first: ${bad.errors[0]}`);
  return lines.join('\n') + '\n\n';
}
