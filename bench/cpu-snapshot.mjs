// Where the CPU goes: samples /proc/<pid>/task/*/stat of the given processes twice, <seconds>
// apart, and prints each process's CPU use (100 % = one core) with its busiest threads.
// Usage: node bench/cpu-snapshot.mjs <seconds> <label>=<pid> [<label>=<pid> …]
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const [secondsArg, ...targets] = process.argv.slice(2);
const seconds = Number(secondsArg);
const TICKS = 100; // USER_HZ on Linux
const procs = targets.map((t) => {
  const [label, pid] = t.split('=');
  return { label, pid: Number(pid) };
});

/** utime + stime of a /proc stat line. */
function ticksOf(stat) {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
  return Number(fields[11]) + Number(fields[12]);
}

/** The process's ticks (threads that ended included) and tid → { comm, ticks }; empty when it is gone. */
function sample(pid) {
  const threads = new Map();
  try {
    threads.total = ticksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    threads.total = 0;
  }
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      threads.set(tid, { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ticks: ticksOf(stat) });
    } catch {
      // the thread ended
    }
  }
  return threads;
}

/** Busy and total ticks of the whole machine (all cores), from /proc/stat. */
function machine() {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const idle = ticks[3] + ticks[4]; // idle + iowait
  const all = ticks.slice(0, 8).reduce((a, b) => a + b, 0); // up to steal
  return { busy: all - idle, all };
}

const before = procs.map((p) => sample(p.pid));
const m0 = machine();
const t0 = performance.now();
await sleep(seconds * 1000);
const after = procs.map((p) => sample(p.pid));
const m1 = machine();
const elapsed = (performance.now() - t0) / 1000;

const pct = (ticks) => (100 * ticks) / TICKS / elapsed;
let total = 0;
const lines = [];
procs.forEach((p, i) => {
  const threads = [...after[i]].map(([tid, t]) => ({ tid, comm: t.comm, cpu: pct(t.ticks - (before[i].get(tid)?.ticks ?? 0)) }));
  const sum = pct(after[i].total - before[i].total);
  total += sum;
  const busy = threads.filter((t) => t.cpu >= 5).sort((a, b) => b.cpu - a.cpu);
  const detail = busy.map((t) => `${t.comm}:${t.cpu.toFixed(0)}`).join(' ');
  lines.push(`    ${p.label.padEnd(22)} ${sum.toFixed(0).padStart(4)} %  (${threads.length} threads; ≥5 %: ${detail || '-'})`);
});
const cores = (m1.all - m0.all) / TICKS / elapsed;
const busy = pct(m1.busy - m0.busy);
process.stdout.write(
  `  CPU over ${elapsed.toFixed(1)} s of the first hog phase (100 % = one core; machine ${busy.toFixed(0)} % busy of ${(cores * 100).toFixed(0)} %, ` +
    `${total.toFixed(0)} % in these processes, ${Math.max(0, busy - total).toFixed(0)} % elsewhere):\n${lines.join('\n')}\n`,
);
