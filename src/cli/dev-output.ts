import { out } from './output.js';

/**
 * What `anvil dev` reads of an instance log line (pino JSON); `event` marks the watcher's and the
 * boot deploys' lines (front/instance/watcher.ts), each request (front/edge/request-observer.ts) and a directive's
 * error (cell/actors/thread-actor.ts).
 */
interface InstanceLine {
  level?: number;
  msg?: string;
  event?: 'redeployed' | 'invalid' | 'skipped' | 'fixed' | 'deleted' | 'request' | 'directive-error';
  port?: number;
  folder?: string;
  api?: string;
  release?: string;
  errors?: string[];
  verb?: string;
  path?: string;
  status?: number;
  ms?: number;
  bus?: boolean;
  label?: string;
  message?: string;
}

const PINO_ERROR = 50;

/**
 * `anvil dev`'s reading of its instance's log: one line for a person per event that matters while
 * editing (serving, redeployed, invalid with every error as `<folder>/<file>:<line>:<column> …`,
 * fixed, a deleted folder), each request, a directive's error (with the author's file:line:col),
 * errors of the instance as they are; the rest only with `verbose`.
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
  const time = c.dim(new Date().toTimeString().slice(0, 8));
  if (line.msg === 'listening' && line.port !== undefined) {
    out.line(
      `${time} ${c.green('serving')} on http://localhost:${line.port}/<api>/… (admin host http://admin.localhost:${line.port})`,
    );
    return line.port;
  }
  const folder = line.folder === undefined ? '' : folderPath(line.folder);
  switch (line.event) {
    case 'redeployed':
      out.line(`${time} ${c.green('redeployed')} ${line.api} (release ${line.release})`);
      break;
    case 'invalid':
    case 'skipped':
      out.line(
        `${time} ${c.red('error')} ${folder} is invalid (${line.errors?.length ?? 0} error(s)); ${line.event === 'invalid' ? 'the last good release keeps serving' : 'it is not served until it is fixed'}`,
      );
      for (const error of line.errors ?? []) out.line(`  ${folder}/${error}`);
      break;
    case 'fixed':
      out.line(`${time} ${c.green('fixed')} ${folder}: ${line.api} serves release ${line.release}`);
      break;
    case 'request': {
      const status = line.status ?? 0;
      const paint = status >= 500 ? c.red : status >= 400 ? c.yellow : c.green;
      out.line(
        `${time} ${line.verb} /${line.api}${line.path === '/' ? '' : (line.path ?? '')} ${paint(String(status))} ${c.dim(`${(line.ms ?? 0).toFixed(1)} ms${line.bus === true ? ', over the bus' : ''}`)}`,
      );
      break;
    }
    case 'directive-error':
      out.line(`${time} ${c.red('error')} ${line.api} [${line.label}] ${line.message} (${line.status})`);
      break;
    case 'deleted':
      out.line(
        `${time} ${c.yellow('deleted')} ${folder}: ${line.api} is disabled (its releases and data are kept; anvil remove deletes them)`,
      );
      break;
    default:
      if ((line.level ?? 0) >= PINO_ERROR) out.line(`${time} ${c.red('error')} ${line.msg ?? ''}`);
      else if (verbose) out.line(`${time} ${c.dim(text)}`);
  }
  return null;
}
