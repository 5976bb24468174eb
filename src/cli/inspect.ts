import { resolve } from 'node:path';
import type { Command } from 'commander';
import { inspectFolder, MAX_SHOWN_BYTES, type InspectedFile } from './inspect-files.js';
import { out, run } from './output.js';
import { checkApiFolder, shownPath } from './validate.js';

/** One file of the text dump: a header line naming it, then its text (or why it is not shown). */
function section(file: InspectedFile): string {
  const size = `${file.bytes} bytes`;
  if (file.kind === 'binary') return `===== ${file.path} (${size}, binary: not shown) =====\n`;
  if (file.kind === 'too-large')
    return `===== ${file.path} (${size}, over ${MAX_SHOWN_BYTES} bytes: not shown) =====\n`;
  const text = file.text ?? '';
  return `===== ${file.path} (${size}) =====\n${text}${text.endsWith('\n') || text === '' ? '' : '\n'}`;
}

export function registerInspect(program: Command): void {
  program
    .command('inspect [dir]')
    .description(
      'Print every file of an API folder that enters a release (api.yaml, Maps, Directives, views, migrations, assets), each under a header, for review; binary files are listed, not shown.',
    )
    .option('--json', 'print a JSON array of {path, bytes, text, kind} (text null when not shown)', false)
    .addHelpText(
      'after',
      '\nExamples:\n  anvil inspect orders | less\n  anvil inspect orders --json | jq -r ".[].path"\n',
    )
    .action((dir: string | undefined, flags: { json: boolean }) =>
      run(flags.json, async () => {
        const folder = resolve(dir ?? '.');
        checkApiFolder(folder);
        const files = await inspectFolder(folder);
        if (flags.json) {
          out.json(files);
          return;
        }
        const hidden = files.filter((f) => f.kind !== 'text').length;
        const total = files.reduce((sum, f) => sum + f.bytes, 0);
        out.line(
          `# ${shownPath(folder)}: ${files.length} files, ${total} bytes${hidden > 0 ? ` (${hidden} not shown)` : ''}`,
        );
        for (const file of files) process.stdout.write(`\n${section(file)}`);
      }),
    );
}
