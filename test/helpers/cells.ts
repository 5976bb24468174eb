import { execFileSync } from 'node:child_process';
import { apiIdentity, assignCell } from '../../src/cells/assign.js';

/** The pid of cell `index` of an instance (its child process started with `--cell <index>`). */
export function cellPid(routerPid: number, index: number): number {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(routerPid)], { encoding: 'utf8' });
  for (const line of out.split('\n')) {
    const match = /^\s*(\d+)\s+.*cell-main\.js --cell (\d+)\b/.exec(line);
    if (match && Number(match[2]) === index) return Number(match[1]);
  }
  throw new Error(`no cell ${index} under pid ${routerPid}:\n${out}`);
}

/** The cell an API of the default public host lands in. */
export function cellOf(key: string, cells: number, env = 'dev'): number {
  return assignCell(apiIdentity('localhost', env, key), cells);
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
