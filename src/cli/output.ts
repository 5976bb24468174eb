/**
 * What the CLI prints: colour only on a terminal (and never with NO_COLOR set), JSON for scripts
 * with `--json`, and failures a person can act on. A command fails by throwing `CliError`; the
 * runner prints it (as `{"ok": false, …}` on stdout with `--json`, else on stderr) and exits 1.
 */

type Paint = (text: string) => string;

export interface Colours {
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  cyan: Paint;
}

function colourEnabled(stream: NodeJS.WriteStream): boolean {
  const noColor = process.env.NO_COLOR;
  if (noColor !== undefined && noColor !== '') return false;
  return stream.isTTY === true;
}

function ansi(open: number, close: number, on: boolean): Paint {
  return on ? (text) => `\u001b[${open}m${text}\u001b[${close}m` : (text) => text;
}

export function coloursFor(stream: NodeJS.WriteStream): Colours {
  const on = colourEnabled(stream);
  return {
    bold: ansi(1, 22, on),
    dim: ansi(2, 22, on),
    red: ansi(31, 39, on),
    green: ansi(32, 39, on),
    yellow: ansi(33, 39, on),
    cyan: ansi(36, 39, on),
  };
}

/** Colours for stdout and stderr (each stream decides on its own whether it is a terminal). */
export const out = {
  get c(): Colours {
    return coloursFor(process.stdout);
  },
  line(text = ''): void {
    process.stdout.write(`${text}\n`);
  },
  json(value: unknown): void {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  },
};

/**
 * A failure the command explains itself: `message`, then `details` (one per line, e.g. validation
 * errors). No catalogue code: it is an exit (1) with a message for a person, never an HTTP answer,
 * and it often relays a server's answer, whose error already has its code.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly details: readonly string[] = [],
    /** Extra fields for the `--json` form (`status` of an HTTP answer, `errors`, …). */
    readonly fields: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Runs a command's work; a `CliError` is printed for a person or for a script, and the exit code set to 1. */
export async function run(json: boolean, work: () => Promise<void> | void): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    process.exitCode = 1;
    if (json) {
      out.json({
        ok: false,
        error: error.message,
        ...(error.details.length > 0 ? { errors: error.details } : {}),
        ...error.fields,
      });
      return;
    }
    const c = coloursFor(process.stderr);
    const lines = [`${c.red(c.bold('error'))} ${error.message}`, ...error.details.map((d) => `  ${d}`)];
    process.stderr.write(`${lines.join('\n')}\n`);
  }
}

/** `1536` → `1.5 kB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
