import type { Command } from 'commander';
import type { ApiRecord } from '../deploy/registry/registry.js';
import { deployTarget, envArgument } from './dotenv.js';
import type { ManagementClient } from './management-client.js';
import { CliError, out, run } from './output.js';

interface Flags {
  json: boolean;
  release?: string;
  to?: string;
}

type Change = (record: ApiRecord, flags: Flags) => { active: boolean; release: string; public: boolean };

/** The release before the current one: release ids sort by time, so the newest id below it. */
function previousRelease(record: ApiRecord): string {
  const older = record.releases.filter((r) => r < record.release).sort();
  const previous = older[older.length - 1];
  if (previous === undefined)
    throw new CliError(
      `${record.key} has no release older than ${record.release} to roll back to`,
      record.releases.length > 0 ? [`kept releases: ${record.releases.join(', ')} (use --to)`] : [],
    );
  return previous;
}

function chosenRelease(record: ApiRecord, wanted: string | undefined): string {
  if (wanted === undefined || wanted === record.release || record.releases.includes(wanted))
    return wanted ?? record.release;
  throw new CliError(`${record.key} has no release "${wanted}"`, [
    `current: ${record.release}`,
    ...(record.releases.length > 0 ? [`kept: ${record.releases.join(', ')}`] : []),
  ]);
}

function printRecord(record: ApiRecord): void {
  const { c } = out;
  const state = !record.active ? c.red('disabled') : record.public ? c.green('public') : c.yellow('private');
  out.line(`${c.bold(record.key)}  ${state}`);
  out.line(`  release   ${c.cyan(record.release)} (current)`);
  for (const release of record.releases) out.line(`            ${release}`);
  out.line(`  created   ${record.created_at}`);
  out.line(`  updated   ${record.updated_at}`);
}

/** GET the record, PUT the change (SPEC §6: publish, disable and rollback are this one call), GET again to show it. */
async function change(key: string, env: string, flags: Flags, verb: string, compute: Change): Promise<void> {
  const target = deployTarget(env);
  const { withClient } = await import('./management-client.js');
  const after = await withClient(target, async (client: ManagementClient) => {
    const before = await client.getApi(key);
    await client.putApi(key, compute(before, flags));
    return client.getApi(key);
  });
  if (flags.json) {
    out.json({ ok: true, ...after });
    return;
  }
  out.line(
    `${out.c.green(verb)} ${out.c.bold(key)} release ${out.c.cyan(after.release)} on ${target.publicHost} (${env})`,
  );
}

const help = (example: string) =>
  `\nThe target comes from DEPLOY_ENDPOINT_<ENV>, PUBLIC_HOST_<ENV> and API_KEY_<ENV> (.env or the environment).\n\nExample:\n  ${example}\n`;

/** publish, disable and rollback: one GET-then-PUT each, differing in the change they make. */
interface ChangeCommand {
  name: string;
  description: string;
  /** Its release option: `--release` or `--to`. */
  releaseOption: [flags: string, description: string];
  verb: string;
  compute: Change;
}

const CHANGE_COMMANDS: ChangeCommand[] = [
  {
    name: 'publish',
    description: 'Make an API active and public (its current release, or --release R).',
    releaseOption: ['--release <id>', 'publish this release instead of the current one'],
    verb: 'published',
    compute: (r, f) => ({ active: true, public: true, release: chosenRelease(r, f.release) }),
  },
  {
    name: 'disable',
    description: 'Disable an API: it then answers 404 on every host (publish brings it back).',
    releaseOption: ['--release <id>', 'also switch to this release'],
    verb: 'disabled',
    compute: (r, f) => ({ active: false, public: false, release: chosenRelease(r, f.release) }),
  },
  {
    name: 'rollback',
    description:
      'Switch an API back to the release before the current one (or --to R); active and public stay as they are.',
    releaseOption: ['--to <id>', 'the release to switch to (see anvil status)'],
    verb: 'rolled back',
    compute: (r, f) => ({
      active: r.active,
      public: r.public,
      release: f.to === undefined ? previousRelease(r) : chosenRelease(r, f.to),
    }),
  },
];

export function registerReleaseCommands(program: Command): void {
  for (const command of CHANGE_COMMANDS) {
    program
      .command(`${command.name} <key> <env>`)
      .description(command.description)
      .option(...command.releaseOption)
      .option('--json', 'print JSON for scripts', false)
      .addHelpText('after', help(`anvil ${command.name} orders dev`))
      .action((key: string, env: string, flags: Flags) =>
        run(flags.json, () => change(key, envArgument(env), flags, command.verb, command.compute)),
      );
  }

  program
    .command('remove <key> <env>')
    .description(
      'Remove a disabled API: its record, every kept release and its data (database, files, logs). It cannot be undone.',
    )
    .option('--json', 'print JSON for scripts', false)
    .addHelpText('after', help('anvil disable orders dev && anvil remove orders dev'))
    .action((key: string, env: string, flags: Flags) =>
      run(flags.json, async () => {
        const target = deployTarget(envArgument(env));
        const { withClient } = await import('./management-client.js');
        await withClient(target, (client) => client.removeApi(key));
        if (flags.json) out.json({ ok: true, key, removed: true });
        else out.line(`${out.c.green('removed')} ${out.c.bold(key)} and its data from ${target.publicHost} (${env})`);
      }),
    );

  program
    .command('status <key> <env>')
    .description("Show an API's record: active, public, the current release and the kept earlier ones.")
    .option('--json', 'print JSON for scripts', false)
    .addHelpText('after', help('anvil status orders dev'))
    .action((key: string, env: string, flags: Flags) =>
      run(flags.json, async () => {
        const { withClient } = await import('./management-client.js');
        const record = await withClient(deployTarget(envArgument(env)), (client) => client.getApi(key));
        if (flags.json) out.json({ ok: true, ...record });
        else printRecord(record);
      }),
    );
}
