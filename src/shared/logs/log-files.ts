/**
 * The names of an API's log files: `YYYY-MM-DD.jsonl` for a UTC day's first file, then
 * `YYYY-MM-DD.1.jsonl`, `YYYY-MM-DD.2.jsonl`… when a file reached its size. Sorting by (day, index)
 * is sorting by age.
 */
import { readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';

export interface LogFile {
  name: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  index: number;
}

const NAME = /^(\d{4}-\d{2}-\d{2})(?:\.([1-9]\d{0,8}))?\.jsonl$/;

export function logFileName(day: string, index: number): string {
  return index === 0 ? `${day}.jsonl` : `${day}.${index}.jsonl`;
}

/** The log file a name stands for, or null for any other file (those are left alone). */
export function parseLogFileName(name: string): LogFile | null {
  const match = NAME.exec(name);
  return match === null ? null : { name, day: match[1]!, index: match[2] === undefined ? 0 : Number(match[2]) };
}

/** The log files in `dir`, oldest first (none when it does not exist). */
export function listLogFiles(dir: string): LogFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return logFilesIn(names);
}

/** `listLogFiles` without blocking the event loop (the router's readers of the log). */
export async function readLogFiles(dir: string): Promise<LogFile[]> {
  try {
    return logFilesIn(await readdir(dir));
  } catch {
    return [];
  }
}

function logFilesIn(names: readonly string[]): LogFile[] {
  const files: LogFile[] = [];
  for (const name of names) {
    const file = parseLogFileName(name);
    if (file !== null) files.push(file);
  }
  return files.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : a.index - b.index));
}

/** The highest index used for `day` so far (0 when none). */
export function lastIndexOf(files: readonly LogFile[], day: string): number {
  let last = 0;
  for (const file of files) if (file.day === day && file.index > last) last = file.index;
  return last;
}
