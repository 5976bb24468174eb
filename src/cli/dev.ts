import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { argument, integer } from './options.js';
import { DevMirror } from './dev-mirror.js';
import { showInstanceLine } from './dev-output.js';
import { CliError, out, run } from './output.js';

interface DevFlags {
  port: number;
  data?: string;
  verbose: boolean;
}

const ANVIL_BIN = fileURLToPath(new URL('../../bin/anvil.js', import.meta.url));

/** The folders as given (default: the current one), each an API folder, no two with the same name. */
function apiFolders(args: string[]): string[] {
  const folders = (args.length === 0 ? ['.'] : args).map((arg) => resolve(arg));
  const names = new Map<string, string>();
  for (const folder of folders) {
    if (!existsSync(join(folder, 'api.yaml')))
      throw new CliError(`${relative('.', folder) || '.'} has no api.yaml`, [
        'anvil dev takes API folders: anvil create-api <name> makes one',
      ]);
    const name = basename(folder);
    const other = names.get(name);
    if (other !== undefined)
      throw new CliError(
        `${other} and ${folder} have the same folder name "${name}": anvil dev serves each under its own`,
      );
    names.set(name, folder);
  }
  return folders;
}

/**
 * `anvil dev [folder…]`: an embedded instance (`anvil start --publish --watch`) serving the given API
 * folders, wherever they are, redeployed on every change, with output for a person: where it
 * serves, each redeploy, each error with its file, line and column, "fixed" when a broken edit is
 * mended, a deleted folder disabled. Its data (databases, keys, logs) persists per working folder
 * in the system's temp folder unless `--data` says where.
 */
export function registerDev(program: Command): void {
  program
    .command('dev')
    .argument('[folders...]', 'API folders (default: the current one)')
    .description('Serve API folders on an embedded instance and redeploy them as you edit.')
    .option('--port <n>', 'port to listen on (0: any free one)', argument('--port', integer(0, 65535)), 8080)
    .option('--data <dir>', 'data directory (default: one per working folder, in the system temp folder)')
    .option('--verbose', "also print the instance's other log lines", false)
    .addHelpText(
      'after',
      '\nExamples:\n  anvil dev                 # the API folder you are in\n  anvil dev notes orders\n',
    )
    .action((args: string[], flags: DevFlags) => run(false, () => serve(apiFolders(args), flags)));
}

async function serve(folders: string[], flags: DevFlags): Promise<void> {
  const dataDir = resolve(
    flags.data ?? join(tmpdir(), `anvil-dev-${createHash('sha256').update(process.cwd()).digest('hex').slice(0, 12)}`),
  );
  const mirror = new DevMirror(mkdtempSync(join(tmpdir(), 'anvil-dev-apis-')), folders);
  mirror.start();
  const shown = new Map(folders.map((folder) => [basename(folder), relative('.', folder) || '.']));
  // Its own process group: Ctrl-C reaches this process alone, which stops the instance once (a
  // second signal to an instance that is draining would kill it mid-drain).
  const child = spawn(
    process.execPath,
    [
      ANVIL_BIN,
      'start',
      '--apis',
      mirror.dir,
      '--publish',
      '--watch',
      '--port',
      String(flags.port),
      '--data',
      dataDir,
      '--drain-delay',
      '0',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      // Each request is a debug line of the instance log (front/edge/request-observer.ts): one line here.
      env: { ...process.env, ANVIL_LOG_LEVEL: process.env.ANVIL_LOG_LEVEL ?? 'debug' },
    },
  );
  process.once('exit', () => child.kill('SIGTERM'));
  createInterface({ input: child.stdout! }).on('line', (text) =>
    showInstanceLine(text, (name) => shown.get(name) ?? name, flags.verbose),
  );
  // The start banner (URLs, the host key, the APIs served) is for a person already.
  child.stderr!.pipe(process.stderr);
  const stop = () => child.kill('SIGTERM');
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const code = await new Promise<number | null>((done) => child.once('exit', (exitCode) => done(exitCode)));
  mirror.close();
  rmSync(mirror.dir, { recursive: true, force: true });
  if (!flags.verbose && code !== 0 && code !== null)
    out.line(out.c.dim(`the instance exited with ${code}; --verbose shows its log`));
  process.exitCode = code ?? 0;
}
