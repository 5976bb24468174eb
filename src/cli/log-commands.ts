import type { Command } from 'commander';
import { deployTarget, envArgument } from './dotenv.js';
import { CliError, out, run } from './output.js';

/** A line of an API's request log (the Log directive's fields), as far as `tail` shows it. */
interface LogLine {
  time?: string;
  verb?: string;
  path?: string;
  status?: number;
  durationMs?: number;
  release?: string;
  errors?: Array<{ label?: string; directive?: string; message?: string }>;
  unreadable?: string;
}

/** One line per request: time, status, verb and path, duration; a failed entry's label and message below. */
function printLine(raw: unknown): void {
  const { c } = out;
  const line = (raw ?? {}) as LogLine;
  if (line.unreadable !== undefined) {
    out.line(c.dim(`(unreadable) ${line.unreadable}`));
    return;
  }
  const status = line.status ?? 0;
  const shown =
    status >= 500 ? c.red(String(status)) : status >= 400 ? c.yellow(String(status)) : c.green(String(status));
  const duration = line.durationMs === undefined ? '' : ` ${c.dim(`${line.durationMs} ms`)}`;
  out.line(`${c.dim(line.time ?? '')} ${shown} ${(line.verb ?? '').toUpperCase()} ${line.path ?? ''}${duration}`);
  for (const error of line.errors ?? [])
    out.line(`    ${c.red('error')} [${error.label ?? '?'} › ${error.directive ?? '?'}] ${error.message ?? ''}`);
}

function filterOf(flags: { status?: string; route?: string; text?: string }): URLSearchParams {
  const filter = new URLSearchParams();
  if (flags.status !== undefined) filter.set('status', flags.status);
  if (flags.route !== undefined) filter.set('route', flags.route);
  if (flags.text !== undefined) filter.set('text', flags.text);
  return filter;
}

const TARGET_HELP =
  'The target comes from DEPLOY_ENDPOINT_<ENV>, PUBLIC_HOST_<ENV> and API_KEY_<ENV> (.env or the environment).';

/** `anvil list <ENV>` and `anvil tail <key> <ENV>`: clients of the management API's list and of an API's request log. */
export function registerLogCommands(program: Command): void {
  program
    .command('list')
    .argument('<env>', 'the env whose public host is listed', envArgument)
    .description("List the keys of the APIs on the env's public host.")
    .option('--json', 'print JSON for scripts', false)
    .addHelpText('after', `\n${TARGET_HELP}\n\nExample:\n  anvil list dev\n`)
    .action((env: string, flags: { json: boolean }) =>
      run(flags.json, async () => {
        const target = deployTarget(env);
        const { withClient } = await import('./management-client.js');
        const keys = await withClient(target, (client) => client.listKeys());
        if (flags.json) return out.json({ ok: true, env, publicHost: target.publicHost, keys });
        if (keys.length === 0) return out.line(out.c.dim(`no APIs on ${target.publicHost} (${env})`));
        for (const key of keys) out.line(key);
      }),
    );

  program
    .command('tail')
    .argument('<key>', 'the API')
    .argument('<env>', 'its env', envArgument)
    .description(
      "Print an API's request log (the lines its Log directive writes): the last lines, then new ones as they come.",
    )
    .option('--status <class>', 'only these statuses: a class (5xx) or a status (503)')
    .option('--route <route>', "only this route template, e.g. 'get /users/{id}'")
    .option('--text <text>', 'only lines containing this text (any case)')
    .option('--lines <n>', 'how many of the last lines first (0–1000)', '20')
    .option('--no-follow', 'print the last lines and stop')
    .option('--json', 'print each line as the JSON it is stored as', false)
    .addHelpText(
      'after',
      `\n${TARGET_HELP}\n\nExamples:\n  anvil tail users dev\n  anvil tail users dev --status 5xx --no-follow\n`,
    )
    .action(
      (
        key: string,
        env: string,
        flags: { status?: string; route?: string; text?: string; lines: string; follow: boolean; json: boolean },
      ) =>
        run(flags.json, async () => {
          const last = Number(flags.lines);
          if (!/^\d{1,4}$/.test(flags.lines) || last > 1000)
            throw new CliError(`--lines: "${flags.lines}" is not a whole number from 0 to 1000`);
          const target = deployTarget(env);
          const filter = filterOf(flags);
          const print = flags.json ? (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`) : printLine;
          const { withClient } = await import('./management-client.js');
          await withClient(target, async (client) => {
            if (last > 0) {
              const limited = new URLSearchParams(filter);
              limited.set('limit', String(last));
              for (const line of await client.logLines(key, limited)) print(line);
            }
            if (flags.follow) await client.followLog(key, filter, print);
          });
        }),
    );
}
