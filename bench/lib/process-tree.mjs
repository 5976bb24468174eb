// The processes of a server under test and what they hold, for density figures summed over every
// process a contender runs (Anvil's router and cells, workerd and any child it forks).
import { readFileSync } from 'node:fs';
import { descendants } from './instance.mjs';

/** `rootPid` and the pids of all its descendants (by the ppid of /proc/<pid>/stat). */
export function processTree(rootPid) {
  return [rootPid, ...descendants(rootPid)];
}

/**
 * Resident memory and threads summed over `pids`, from /proc/<pid>/status (VmRSS, Threads):
 * { rssBytes, threads }. A process that is gone counts 0.
 */
export function treeFigures(pids) {
  let rssBytes = 0;
  let threads = 0;
  for (const pid of pids) {
    let status;
    try {
      status = readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      continue;
    }
    rssBytes += Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
    threads += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return { rssBytes, threads };
}
