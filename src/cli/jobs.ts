import { resolve } from 'node:path';
import type { Command } from 'commander';
import { auditedCliAction } from '../front/audit/cli-audit.js';
import { DataPaths } from '../deploy/api-yaml/data-paths.js';
import { Registry } from '../deploy/registry/registry.js';
import type { JobQueue } from '../front/jobs/job-queue.js';
import { formatApiId } from '../shared/protocol/api-id.js';
import { readInstanceEnvironment } from './environment.js';
import { CliError, run } from './output.js';

interface JobsFlags {
  data: string;
  host: string;
  api?: string;
  json: boolean;
}

/** `--api <key>` of `--host` → the queue's API identity (`<host>/<env>/<key>`). */
function apiOf(flags: JobsFlags): string | undefined {
  if (flags.api === undefined) return undefined;
  const registry = Registry.open(new DataPaths(resolve(flags.data)).registryFile);
  try {
    const host = registry.getHost(flags.host);
    if (host === null || host.kind !== 'public')
      throw new CliError(`--host: "${flags.host}" is not a public host of ${flags.data}`);
    return formatApiId({ host: host.name, env: host.env, key: flags.api });
  } finally {
    registry.close();
  }
}

/** A job action's audit entry: the host and API with --api; without it, every API's jobs (instance-wide: no host). */
function jobAction(action: 'jobs-flush' | 'jobs-requeue-failed', flags: JobsFlags) {
  return flags.api === undefined
    ? { action, host: null, detail: { scope: 'every API' } }
    : { action, host: flags.host.toLowerCase(), api: flags.api };
}

async function withQueue<T>(flags: JobsFlags, work: (queue: JobQueue) => Promise<T>): Promise<T> {
  const { openJobQueue } = await import('../front/jobs/open-queue.js');
  const { redisUrl, redisPrefix } = readInstanceEnvironment();
  const queue = await openJobQueue({
    dataDir: resolve(flags.data),
    redisUrl: redisUrl ?? undefined,
    prefix: redisPrefix,
  });
  try {
    return await work(queue);
  } finally {
    await queue.close(0);
  }
}

function print(flags: JobsFlags, value: unknown, text: string): void {
  process.stdout.write(flags.json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
}

/** `anvil jobs count|get|flush|requeue-failed`: the job queue of a data dir (or of Redis with REDIS_URL). */
export function registerJobs(program: Command): void {
  const jobs = program
    .command('jobs')
    .description(
      'Inspect and manage queued jobs (SPEC §8): the embedded queue of --data, or BullMQ when REDIS_URL is set.',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  anvil jobs count --api users\n  anvil jobs get j-mws3k2-8f3a\n  anvil jobs requeue-failed --api users\n',
    );
  const common = (command: Command) =>
    command
      .option('--data <dir>', 'data directory', './data')
      .option('--host <host>', 'public host of --api', 'localhost')
      .option('--api <key>', 'only the jobs of this API')
      .option('--json', 'print JSON', false);

  const example = (line: string) => `\nExample:\n  ${line}\n`;

  common(
    jobs.command('count').description('Jobs per state').addHelpText('after', example('anvil jobs count --api users')),
  ).action((flags: JobsFlags) =>
    run(flags.json, async () => {
      const counts = await withQueue(flags, (q) => q.counts(apiOf(flags)));
      print(
        flags,
        counts,
        Object.entries(counts as unknown as Record<string, number>)
          .map(([state, n]) => `${state.padEnd(10)} ${n}`)
          .join('\n'),
      );
    }),
  );

  common(
    jobs
      .command('get <id>')
      .description('One job: state, attempts, error, payload')
      .addHelpText('after', example('anvil jobs get j-mws3k2-8f3a --json')),
  ).action((id: string, flags: JobsFlags) =>
    run(flags.json, async () => {
      const job = await withQueue(flags, (q) => q.get(id));
      if (job === null) throw new CliError(`no job ${id}`);
      print(
        flags,
        job,
        [
          `id        ${job.id}`,
          `api       ${job.api}`,
          `state     ${job.state}`,
          `attempts  ${job.attempts}`,
          `error     ${job.error ?? '-'}`,
          `created   ${new Date(job.createdAt).toISOString()}`,
        ].join('\n'),
      );
    }),
  );

  common(
    jobs
      .command('flush')
      .description('Remove waiting, delayed, completed and failed jobs')
      .addHelpText('after', example('anvil jobs flush --api users')),
  ).action((flags: JobsFlags) =>
    run(flags.json, async () => {
      const removed = await auditedCliAction(
        flags.data,
        jobAction('jobs-flush', flags),
        () => withQueue(flags, (q) => q.flush(apiOf(flags))),
        (n) => ({ removed: n }),
      );
      print(flags, { removed }, `removed ${removed} job(s)`);
    }),
  );

  common(
    jobs
      .command('requeue-failed')
      .description('Put failed jobs back to run again')
      .addHelpText('after', example('anvil jobs requeue-failed --api users')),
  ).action((flags: JobsFlags) =>
    run(flags.json, async () => {
      const requeued = await auditedCliAction(
        flags.data,
        jobAction('jobs-requeue-failed', flags),
        () => withQueue(flags, (q) => q.requeueFailed(apiOf(flags))),
        (n) => ({ requeued: n }),
      );
      print(flags, { requeued }, `requeued ${requeued} job(s)`);
    }),
  );
}
