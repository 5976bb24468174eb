// What the soak (bench/soak.mjs) samples of an instance every interval: the router's and the
// cells' resident memory and open file descriptors (from /proc), the SQLite files of the data
// directory (with their WAL files) and the queues (jobs per state, requests waiting in mailboxes,
// from /anvil/metrics).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cellsOf, get } from './instance.mjs';

const MiB = 1024 * 1024;

/** The CSV columns, in order. */
export const COLUMNS = [
  'seconds',
  'routerRssMiB',
  'cellsRssMiB',
  'cells',
  'routerFds',
  'cellsFds',
  'sqliteMiB',
  'jobsQueued',
  'jobsDone',
  'mailbox',
  'requests',
];

/** One sample of `instance`, `seconds` into the run; `requests`: answers counted so far. */
export async function sample(instance, seconds, requests) {
  const cells = cellsOf(instance).map((c) => c.pid);
  const metrics = await readMetrics(instance);
  return {
    seconds: Math.round(seconds),
    routerRssMiB: round(rssKiB(instance.pid) / 1024),
    cellsRssMiB: round(cells.reduce((sum, pid) => sum + rssKiB(pid), 0) / 1024),
    cells: cells.length,
    routerFds: fds(instance.pid),
    cellsFds: cells.reduce((sum, pid) => sum + fds(pid), 0),
    sqliteMiB: round(sqliteBytes(instance.dataDir) / MiB),
    jobsQueued: sumOf(metrics, 'anvil_job_queue_depth', (labels) =>
      /state="(waiting|delayed|active|prioritized|running)"/.test(labels),
    ),
    jobsDone: sumOf(metrics, 'anvil_job_queue_depth', (labels) => /state="(completed|done|failed)"/.test(labels)),
    mailbox: sumOf(metrics, 'anvil_actor_mailbox_depth', () => true),
    requests,
  };
}

function round(x) {
  return Math.round(x * 10) / 10;
}

/** VmRSS of a process, KiB (0 once it is gone). */
function rssKiB(pid) {
  try {
    return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Open file descriptors of a process (0 once it is gone). */
function fds(pid) {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/** Bytes of every SQLite file under `dir` (`*.sqlite`, `*.db` and their -wal / -shm files). */
function sqliteBytes(dir) {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += sqliteBytes(path);
    else if (/\.(sqlite|db)(-wal|-shm)?$/.test(entry.name)) {
      try {
        total += statSync(path).size;
      } catch {
        // removed meanwhile
      }
    }
  }
  return total;
}

/** The text of /anvil/metrics on the admin host ('' when it does not answer). */
async function readMetrics(instance) {
  try {
    const reply = await get(instance.port, '/anvil/metrics', { host: 'admin.localhost' });
    return reply.status === 200 ? reply.body : '';
  } catch {
    return '';
  }
}

/** The sum of a metric's series whose labels pass `keep`. */
function sumOf(text, name, keep) {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = line.slice(name.length, line.lastIndexOf(' '));
    if (keep(labels)) total += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return total;
}
