import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { assignCell } from '../../src/cell/process/assign.js';
import { formatApiId } from '../../src/shared/protocol/api-id.js';

/** Cell processes of an instance (children started with `--cell <index>`): [pid, index] pairs. */
function cells(routerPid: number): Array<[number, number]> {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(routerPid)], { encoding: 'utf8' });
  return out.split('\n').flatMap((line): Array<[number, number]> => {
    const match = /^\s*(\d+)\s+.*cell-main\.js --cell (\d+)\b/.exec(line);
    return match ? [[Number(match[1]), Number(match[2])]] : [];
  });
}

/** The pid of cell `index` of an instance. */
export function cellPid(routerPid: number, index: number): number {
  const found = cells(routerPid).find(([, cell]) => cell === index);
  if (found === undefined) throw new Error(`no cell ${index} under pid ${routerPid}`);
  return found[0];
}

/** Whether a process of cell `index` of an instance runs. */
export function hasCellProcess(routerPid: number, index: number): boolean {
  return cells(routerPid).some(([, cell]) => cell === index);
}

/** The pids of every cell process of an instance. */
export function cellPids(routerPid: number): number[] {
  return cells(routerPid).map(([pid]) => pid);
}

/** The cell an API of the default public host lands in. */
export function cellOf(key: string, cells: number, env = 'dev'): number {
  return assignCell(formatApiId({ host: 'localhost', env, key }), cells);
}

/** API keys, `prefix-0`, `prefix-1`, …, until one lands in each of the `cells` cells. */
export function keysPerCell(prefix: string, cells: number, env = 'dev'): string[] {
  const found: string[] = [];
  for (let i = 0; found.filter(Boolean).length < cells && i < 1000; i++) {
    const key = `${prefix}-${i}`;
    const cell = cellOf(key, cells, env);
    if (found[cell] === undefined) found[cell] = key;
  }
  return found;
}

/**
 * Field `n` of /proc/<pid>/stat, or of a thread's with `pid/task/tid`, as numbered in proc(5)
 * (4: parent pid, 14/15: user/system CPU in clock ticks, 19: nice, 41: scheduling policy).
 */
export function statField(pid: number | string, n: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[n - 3]);
}

/** The OS threads of a process (its /proc tasks). */
export function taskCount(pid: number): number {
  return readdirSync(`/proc/${pid}/task`).length;
}

/**
 * The task count of a cell once it has stopped changing for a second: a cell starts its spare
 * threads one after another, so a count read right after start may miss one.
 */
export async function settledTaskCount(pid: number): Promise<number> {
  let last = taskCount(pid);
  let stableSince = Date.now();
  const deadline = Date.now() + 15_000;
  while (Date.now() - stableSince < 1_000 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    const now = taskCount(pid);
    if (now !== last) {
      last = now;
      stableSince = Date.now();
    }
  }
  return last;
}
