import { resolve } from 'node:path';
import type { Command } from 'commander';
import { DataPaths } from '../config/data-paths.js';
import { generatePublicHostKey } from '../registry/public-host-key.js';
import { Registry } from '../registry/registry.js';
import { envName } from './options.js';

function openRegistry(data: string): Registry {
  return Registry.open(new DataPaths(resolve(data)).registryFile);
}

/** `anvil hosts …`: virtual hosts in the local data dir; a running instance picks changes up within a second. */
export function registerHosts(program: Command): void {
  const hosts = program
    .command('hosts')
    .description('List and change the virtual hosts of a data directory (a running instance notices within a second).')
    .addHelpText('after', '\nExamples:\n  anvil hosts list\n  anvil hosts add-public shop.localhost --env pro --path /shop\n  anvil hosts remove shop.localhost\n');

  hosts
    .command('list')
    .description('List the hosts (public host keys are not shown; use --show-keys)')
    .option('--data <dir>', 'data directory', './data')
    .option('--json', 'print JSON', false)
    .option('--show-keys', 'include public host keys', false)
    .action((flags: { data: string; json: boolean; showKeys: boolean }) => {
      const registry = openRegistry(flags.data);
      const list = registry.listHosts().map((h) => (h.kind === 'public' && !flags.showKeys ? { ...h, key: '…' } : h));
      registry.close();
      if (flags.json) process.stdout.write(JSON.stringify(list, null, 2) + '\n');
      else for (const h of list) process.stdout.write(h.kind === 'admin' ? `admin   ${h.name}\n` : `public  ${h.name}  env ${h.env}${h.path ? `  path ${h.path}` : ''}${flags.showKeys ? `  key ${h.key}` : ''}\n`);
    });

  hosts
    .command('add-admin <host>')
    .description('Add an admin host (management API and private calls)')
    .option('--data <dir>', 'data directory', './data')
    .action((name: string, flags: { data: string }) => {
      const registry = openRegistry(flags.data);
      try {
        registry.addAdminHost(name);
      } finally {
        registry.close();
      }
      process.stdout.write(`added admin host ${name.toLowerCase()}\n`);
    });

  hosts
    .command('add-public <host>')
    .description('Add a public host; with --path it serves exactly one API (/<key>) at its root')
    .requiredOption('--env <name>', 'environment of the host (dev, pro, …)', envName)
    .option('--key <key>', 'the public host key (generated when omitted)')
    .option('--path <path>', 'serve only the API /<key> on this host')
    .option('--data <dir>', 'data directory', './data')
    .action((name: string, flags: { env: string; key?: string; path?: string; data: string }) => {
      const key = flags.key ?? generatePublicHostKey();
      const registry = openRegistry(flags.data);
      try {
        registry.addPublicHost({ name, key, env: flags.env, path: flags.path ?? null });
      } finally {
        registry.close();
      }
      process.stdout.write(`added public host ${name.toLowerCase()} (env ${flags.env}${flags.path ? `, path ${flags.path}` : ''})${flags.key === undefined ? `\nkey: ${key}` : ''}\n`);
    });

  hosts
    .command('remove <host>')
    .description('Remove a host (a public host must have no APIs left)')
    .option('--data <dir>', 'data directory', './data')
    .action((name: string, flags: { data: string }) => {
      const registry = openRegistry(flags.data);
      let removed: boolean;
      try {
        removed = registry.removeHost(name);
      } finally {
        registry.close();
      }
      if (!removed) throw new Error(`no host named "${name}"`);
      process.stdout.write(`removed host ${name.toLowerCase()}\n`);
    });
}
