/**
 * The priority (nice) of this process's OS threads. On Linux a nice value belongs to one thread
 * (setpriority with a thread id) and a new thread starts with its creator's; elsewhere only the
 * process's own can be set.
 */
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Sets `nice` on every thread of this process that exists now (V8's and libuv's included). */
export function setThreadsNice(nice: number): void {
  setPriority(nice);
  if (process.platform !== 'linux') return;
  for (const tid of readdirSync('/proc/self/task').map(Number)) {
    if (tid === process.pid) continue; // the main thread's id is the process id: done above
    try {
      setPriority(tid, nice);
    } catch {
      // the thread ended
    }
  }
}
