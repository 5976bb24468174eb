// Where the CPU goes while a load runs: samples /proc/<pid>/task/*/stat of the given processes at
// the start and end of a window, and gives each process's CPU use (100 % = one core) with its
// busiest threads, and the machine's. (Was bench/cpu-snapshot.mjs.)
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** USER_HZ on Linux: /proc's CPU times are in these ticks per second. */
export const TICKS = 100;

/** The fields of a /proc stat line after the command name: [0] is field 3 (state). */
function statFields(stat) {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of a /proc stat line. */
function ticksOf(stat) {
  const fields = statFields(stat);
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * utime + stime of a process (all its threads), in µs, 0 once it is gone; with `children`, also of
 * its children it has waited for (wrk).
 */
export function processCpuUs(pid, children = false) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const own = ticksOf(stat);
    if (!children) return own * (1e6 / TICKS);
    const fields = statFields(stat);
    return (own + Number(fields[13]) + Number(fields[14])) * (1e6 / TICKS);
  } catch {
    return 0;
  }
}

/** A process's CPU ticks and its threads': { total, threads: tid (string) → { comm, ticks } }; empty once it is gone. */
export function threadTicks(pid) {
  const threads = new Map();
  let total = 0;
  try {
    total = ticksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        threads.set(tid, { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ticks: ticksOf(stat) });
      } catch {
        // the thread ended
      }
    }
  } catch {
    // the process is gone
  }
  return { total, threads };
}

/** Busy and total ticks of the whole machine, from /proc/stat. */
function machine() {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const idle = ticks[3] + ticks[4];
  const all = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: all - idle, all };
}

/**
 * Samples `targets` ([{ label, pid }]) over `seconds`; returns a one-paragraph text:
 * "machine 190 % busy of 200 %; router 98 % (main:92); cell-0 45 % (…); …".
 */
export async function cpuSnapshot(targets, seconds) {
  const before = targets.map((t) => threadTicks(t.pid));
  const m0 = machine();
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const after = targets.map((t) => threadTicks(t.pid));
  const m1 = machine();
  const elapsed = (performance.now() - t0) / 1000;
  const pct = (ticks) => (100 * ticks) / TICKS / elapsed;
  const parts = targets.map((t, i) => {
    const threads = [...after[i].threads]
      .map(([tid, s]) => ({ comm: s.comm, cpu: pct(s.ticks - (before[i].threads.get(tid)?.ticks ?? 0)) }))
      .filter((s) => s.cpu >= 5)
      .sort((a, b) => b.cpu - a.cpu)
      .map((s) => `${s.comm} ${s.cpu.toFixed(0)}`);
    return `${t.label} ${pct(after[i].total - before[i].total).toFixed(0)} %${threads.length ? ` (${threads.join(', ')})` : ''}`;
  });
  const cores = (m1.all - m0.all) / TICKS / elapsed;
  return `machine ${pct(m1.busy - m0.busy).toFixed(0)} % busy of ${(cores * 100).toFixed(0)} %; ${parts.join('; ')}`;
}
