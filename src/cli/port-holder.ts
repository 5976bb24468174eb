import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/**
 * Which process listens on TCP `port` (Linux: /proc/net/tcp{,6} gives the socket's inode, a
 * process's /proc/<pid>/fd links name it): "python3 (pid 1234)", or null when it cannot be told
 * (another OS, or a process of another user whose fds are closed to us).
 */
export function portHolder(port: number): string | null {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; the inode is the 10th field.
      if (fields.length < 10 || fields[3] !== '0A') continue;
      if (Number.parseInt(fields[1]!.split(':')[1] ?? '', 16) === port) inodes.add(fields[9]!);
    }
  }
  if (inodes.size === 0) return null;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode !== undefined && inodes.has(inode)) return `${commandName(pid)} (pid ${pid})`;
    }
  }
  return null;
}

function commandName(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return 'a process';
  }
}
