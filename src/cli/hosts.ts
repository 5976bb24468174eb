import { resolve } from 'node:path';
import type { Command } from 'commander';
import { auditedCliAction } from '../front/audit/cli-audit.js';
import { DataPaths } from '../deploy/api-yaml/data-paths.js';
import { generatePublicHostKey } from '../deploy/registry/public-host-key.js';
import type { HostStore } from '../deploy/control-plane/host-store.js';
import { AnvilError } from '../shared/errors.js';
import { Registry, RegistryValidationError } from '../deploy/registry/registry.js';
import { readInstanceEnvironment } from './environment.js';
import { argument, envName } from './options.js';
import { CliError, out, run } from './output.js';

interface HostFlags {
  data: string;
  json: boolean;
}

/**
 * Runs `work` on the hosts: those of the control plane with DATABASE_URL (cluster mode), else those
 * of the registry of `--data`. Refusals (a bad name, a host with APIs) become CLI errors.
 */
async function withHosts<T>(data: string, work: (hosts: HostStore) => Promise<T>): Promise<T> {
  const url = readInstanceEnvironment().databaseUrl;
  let hosts: HostStore;
  if (url === null) hosts = localHosts(Registry.open(new DataPaths(resolve(data)).registryFile));
  else hosts = await (await import('../deploy/control-plane/pg-host-store.js')).PgHostStore.open(url);
  try {
    return await work(hosts);
  } catch (error) {
    if (error instanceof RegistryValidationError) throw new CliError(error.message);
    if (error instanceof AnvilError) throw new CliError(error.message);
    throw error;
  } finally {
    await hosts.close();
  }
}

function localHosts(registry: Registry): HostStore {
  return {
    listHosts: async () => registry.listHosts(),
    addAdminHost: async (name) => registry.addAdminHost(name),
    addPublicHost: async (host) => registry.addPublicHost(host),
    removeHost: async (name) => registry.removeHost(name),
    close: async () => registry.close(),
  };
}

/** Where the hosts are, for messages. */
function hostsPlace(data: string): string {
  return readInstanceEnvironment().databaseUrl === null ? resolve(data) : 'the control plane (DATABASE_URL)';
}

const common = (command: Command) =>
  command
    .option('--data <dir>', 'data directory of the instance', './data')
    .option('--json', 'print JSON for scripts', false);
const example = (...lines: string[]) =>
  `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  ${l}\n`).join('')}`;

/**
 * `anvil hosts …`: the virtual hosts of a data directory's registry, or with DATABASE_URL those of
 * the cluster's control plane. A running instance picks changes up within a second.
 */
export function registerHosts(program: Command): void {
  const hosts = program
    .command('hosts')
    .description('List and change the virtual hosts of a data directory (a running instance notices within a second).')
    .addHelpText(
      'after',
      example(
        'anvil hosts list',
        'anvil hosts add-public shop.localhost --env pro --path /shop',
        'anvil hosts remove shop.localhost',
      ),
    );

  common(hosts.command('list'))
    .description('List the hosts (public host keys are hidden unless --show-keys)')
    .option('--show-keys', 'include public host keys', false)
    .addHelpText('after', example('anvil hosts list --show-keys'))
    .action((flags: HostFlags & { showKeys: boolean }) =>
      run(flags.json, async () => {
        const list = (await withHosts(flags.data, (r) => r.listHosts())).map((h) =>
          h.kind === 'public' && !flags.showKeys ? { ...h, key: '…' } : h,
        );
        if (flags.json) return out.json(list);
        for (const h of list) {
          out.line(
            h.kind === 'admin'
              ? `admin   ${h.name}`
              : `public  ${h.name}  env ${h.env}${h.path ? `  path ${h.path}` : ''}${flags.showKeys ? `  key ${h.key}` : ''}`,
          );
        }
      }),
    );

  common(hosts.command('add-admin <host>'))
    .description('Add an admin host (management API and private calls)')
    .addHelpText('after', example('anvil hosts add-admin admin.example.com'))
    .action((name: string, flags: HostFlags) =>
      run(flags.json, async () => {
        // An admin host serves every public host: instance-wide (no host), its name in the detail.
        await auditedCliAction(
          flags.data,
          { action: 'host-add', host: null, detail: { kind: 'admin', name: name.toLowerCase() } },
          () => withHosts(flags.data, (r) => r.addAdminHost(name)),
        );
        if (flags.json) out.json({ ok: true, kind: 'admin', name: name.toLowerCase() });
        else out.line(`${out.c.green('added')} admin host ${name.toLowerCase()}`);
      }),
    );

  common(hosts.command('add-public <host>'))
    .description('Add a public host; with --path it serves exactly one API (/<key>) at its root')
    .requiredOption('--env <name>', 'environment of the host (dev, pro, …)', argument('--env', envName))
    .option('--key <key>', 'the public host key (generated when omitted)')
    .option('--path <path>', 'serve only the API /<key> on this host')
    .addHelpText('after', example('anvil hosts add-public shop.localhost --env pro --path /shop'))
    .action((name: string, flags: HostFlags & { env: string; key?: string; path?: string }) =>
      run(flags.json, async () => {
        const key = flags.key ?? generatePublicHostKey();
        const detail = { kind: 'public', env: flags.env, path: flags.path ?? null };
        await auditedCliAction(flags.data, { action: 'host-add', host: name.toLowerCase(), detail }, () =>
          withHosts(flags.data, (r) => r.addPublicHost({ name, key, env: flags.env, path: flags.path ?? null })),
        );
        if (flags.json)
          return out.json({
            ok: true,
            kind: 'public',
            name: name.toLowerCase(),
            env: flags.env,
            path: flags.path ?? null,
            key,
          });
        out.line(
          `${out.c.green('added')} public host ${name.toLowerCase()} (env ${flags.env}${flags.path ? `, path ${flags.path}` : ''})`,
        );
        if (flags.key === undefined) out.line(`key: ${key}`);
      }),
    );

  common(hosts.command('remove <host>'))
    .description('Remove a host (a public host must have no APIs left)')
    .addHelpText('after', example('anvil hosts remove shop.localhost'))
    .action((name: string, flags: HostFlags) =>
      run(flags.json, async () => {
        const kind = await withHosts(
          flags.data,
          async (r) => (await r.listHosts()).find((h) => h.name === name.toLowerCase())?.kind ?? null,
        );
        const audited =
          kind === 'admin'
            ? { host: null, detail: { kind, name: name.toLowerCase() } }
            : { host: name.toLowerCase(), detail: { kind } };
        await auditedCliAction(flags.data, { action: 'host-remove', ...audited }, async () => {
          if (!(await withHosts(flags.data, (r) => r.removeHost(name))))
            throw new CliError(`no host named "${name}" in ${hostsPlace(flags.data)}`);
        });
        if (flags.json) out.json({ ok: true, removed: name.toLowerCase() });
        else out.line(`${out.c.green('removed')} host ${name.toLowerCase()}`);
      }),
    );
}
