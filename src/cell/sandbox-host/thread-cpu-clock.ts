import { closeSync, openSync, readSync } from 'node:fs';

export interface ThreadCpuClock {
  read(): bigint;
  close(): void;
}

/**
 * The calling thread's CPU time in ns, read from the descriptor of its schedstat (opened here, so it
 * stays this thread's: make it on the thread it is to measure), or null off Linux (Node 20 has no
 * per-thread `cpuUsage`). The figure of a thread that is running moves only at a scheduler tick or
 * when the thread is switched out (steps of 4 ms here, CONFIG_HZ=250): see cpu-bound.ts.
 */
export function threadCpuClock(): ThreadCpuClock | null {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return null;
  }
  const buffer = Buffer.alloc(96);
  const read = (): bigint => {
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    const space = buffer.indexOf(0x20);
    return BigInt(buffer.toString('latin1', 0, space > 0 && space < length ? space : length));
  };
  try {
    read();
    return { read, close: () => closeSync(fd) };
  } catch {
    closeSync(fd);
    return null;
  }
}
