/**
 * Where the low-priority cell may run: the last quarter (at least one) of the CPUs this process may
 * use. Confining it matters more than its priority: Linux places a woken thread on a CPU that runs
 * only low-priority work as readily as on an idle one, and on a virtual machine the woken thread can
 * then wait up to a timer tick (4 ms here) before it preempts the hog. With the hog on its own
 * CPUs, a light API's thread finds the others free.
 */
import { readFileSync } from 'node:fs';

/** CPU numbers in a Linux CPU list such as `0-3,6`; null when it is not one. */
export function parseCpuList(list: string): number[] | null {
  const cpus: number[] = [];
  for (const part of list.trim().split(',')) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (range === null) return null;
    const first = Number(range[1]);
    const last = range[2] === undefined ? first : Number(range[2]);
    for (let cpu = first; cpu <= last; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** The CPUs for the low-priority cell, as a list for `taskset -c`; null when there is nothing to confine (one CPU, or not Linux). */
export function lowPriorityCpus(allowedList = allowedCpuList()): string | null {
  const cpus = allowedList === null ? null : parseCpuList(allowedList);
  if (cpus === null || cpus.length < 2) return null;
  return cpus.slice(-Math.max(1, Math.floor(cpus.length / 4))).join(',');
}

function allowedCpuList(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    return /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}
