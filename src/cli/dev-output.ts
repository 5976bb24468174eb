import { out } from './output.js';

/** What `anvil dev` reads of an instance log line (pino JSON). */
interface InstanceLine {
  level?: number;
  msg?: string;
  port?: number;
  folder?: string;
  errors?: string[];
}

const PINO_ERROR = 50;

/**
 * `anvil dev`'s reading of its instance's log: one line for a person per event that matters while
 * editing (serving, redeployed, invalid with every error as `<folder>/<file>:<line>:<column> …`,
 * fixed, a deleted folder), errors of the instance as they are; the rest only with `verbose`.
 * `folderPath` gives the folder as the author named it. Returns the port once the instance listens.
 */
export function showInstanceLine(text: string, folderPath: (name: string) => string, verbose: boolean): number | null {
  const { c } = out;
  let line: InstanceLine;
  try {
    line = JSON.parse(text) as InstanceLine;
  } catch {
    if (text.trim() !== '') out.line(text);
    return null;
  }
  const msg = line.msg ?? '';
  const time = c.dim(new Date().toTimeString().slice(0, 8));
  if (msg === 'listening' && line.port !== undefined) {
    out.line(`${time} ${c.green('serving')} on http://localhost:${line.port}/<api>/… (admin host http://admin.localhost:${line.port})`);
    return line.port;
  }
  if (msg.startsWith('redeployed ')) out.line(`${time} ${c.green('redeployed')} ${msg.slice('redeployed '.length)}`);
  else if (msg.includes('changed and is invalid') || msg.includes('is invalid and was skipped')) {
    const folder = line.folder === undefined ? '' : folderPath(line.folder);
    const serving = msg.includes('changed') ? 'the last good release keeps serving' : 'it is not served until it is fixed';
    out.line(`${time} ${c.red('error')} ${folder} is invalid (${line.errors?.length ?? 0} error(s)); ${serving}`);
    for (const error of line.errors ?? []) out.line(`  ${folder}/${error}`);
  } else if (msg.includes(' is fixed: ')) out.line(`${time} ${c.green('fixed')} ${line.folder === undefined ? '' : folderPath(line.folder)}: ${msg.slice(msg.indexOf(' is fixed: ') + ' is fixed: '.length)}`);
  else if (msg.includes(' was deleted: ')) out.line(`${time} ${c.yellow('deleted')} ${line.folder === undefined ? '' : folderPath(line.folder)}: ${msg.slice(msg.indexOf(' was deleted: ') + ' was deleted: '.length)}`);
  else if ((line.level ?? 0) >= PINO_ERROR) out.line(`${time} ${c.red('error')} ${msg}`);
  else if (verbose) out.line(`${time} ${c.dim(text)}`);
  return null;
}
