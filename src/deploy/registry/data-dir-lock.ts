import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { Errors } from '../../shared/errors.js';
import type { LockHolder } from '../../shared/errors/lock-holder.js';

export type { LockHolder } from '../../shared/errors/lock-holder.js';

export interface DataDirLock {
  /** The dead instance whose lock was taken over, if any (null also when its file was unreadable). */
  readonly tookOverFrom: LockHolder | null;
  /** True when a lock file was found and taken over because nothing holds it any more. */
  readonly tookOver: boolean;
  /** Records the port once listening, so a refused start can say where the holder serves. */
  notePort(port: number): void;
  /** Removes the lock file if it is still this holder's. */
  release(): void;
}

/** A second instance on the same data directory (ANVIL_ERR_DATA_DIR_IN_USE), made by `Errors.dataDirInUse`. */
export { DataDirInUseError } from '../../shared/errors/anvil-error.js';

const heldTokens = new Set<string>();

/**
 * Takes the data directory's lock file or throws DataDirInUseError naming the live holder. The file
 * appears complete or not at all (written aside, then hard-linked into place: link fails if the
 * name exists), so of two starts at once exactly one wins. A lock whose process is gone is taken
 * over: moved aside by rename (only one contender can move a given file), and put back if what was
 * moved turns out to be a newer, live lock.
 */
export function acquireDataDirLock(dataDir: string, lockFile: string): DataDirLock {
  const me: LockHolder = {
    pid: process.pid,
    processStart: processStart(process.pid),
    startedAt: new Date().toISOString(),
    port: null,
    token: randomBytes(8).toString('hex'),
  };
  let tookOver = false;
  let tookOverFrom: LockHolder | null = null;
  // Each round either takes the lock, refuses, or saw the file change under it: a few rounds suffice.
  for (let round = 0; round < 20; round++) {
    if (linkInto(lockFile, me)) {
      heldTokens.add(me.token);
      return holding(lockFile, me, tookOver, tookOverFrom);
    }
    const text = readOrNull(lockFile);
    if (text === null) continue;
    const holder = parseHolder(text);
    if (holder !== null && isAlive(holder)) throw Errors.dataDirInUse(dataDir, lockFile, holder);
    if (moveAsideIfUnchanged(lockFile, text, me.token)) {
      tookOver = true;
      tookOverFrom = holder;
    }
  }
  throw new Error(`could not take the lock ${lockFile}: it kept changing (other instances starting on ${dataDir}?)`);
}

function holding(lockFile: string, me: LockHolder, tookOver: boolean, tookOverFrom: LockHolder | null): DataDirLock {
  const stillMine = () => parseHolder(readOrNull(lockFile) ?? '')?.token === me.token;
  return {
    tookOver,
    tookOverFrom,
    notePort(port) {
      if (!stillMine()) return;
      const aside = `${lockFile}.${me.token}`;
      writeFileSync(aside, JSON.stringify({ ...me, port }) + '\n');
      renameSync(aside, lockFile);
    },
    release() {
      heldTokens.delete(me.token);
      if (stillMine()) unlinkSync(lockFile);
    },
  };
}

/** Writes the record aside and links it in; false when a lock file is already there. */
function linkInto(lockFile: string, record: LockHolder): boolean {
  const aside = `${lockFile}.${record.token}`;
  writeFileSync(aside, JSON.stringify(record) + '\n', { flag: 'wx' });
  try {
    linkSync(aside, lockFile);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new Error(`could not create the lock file ${lockFile}: ${(error as Error).message}`);
  } finally {
    unlinkSync(aside);
  }
}

/** Removes the lock file if it still holds `text`; puts a newer one back. True when it removed it. */
function moveAsideIfUnchanged(lockFile: string, text: string, token: string): boolean {
  const aside = `${lockFile}.stale-${token}`;
  try {
    renameSync(lockFile, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  const moved = readOrNull(aside);
  if (moved !== text) {
    // Another start took over between our read and our rename: give its lock back. (Should a third
    // start have linked its own lock in that instant, the put-back fails and both run: three starts
    // within microseconds on a stale lock is the one race this does not close.)
    try {
      linkSync(aside, lockFile);
    } catch {
      // EEXIST: see above.
    }
  }
  unlinkSync(aside);
  return moved === text;
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Null for anything but a record we wrote (our writes are whole, so this is not ours: stale). */
function parseHolder(text: string): LockHolder | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  // pid 0 and negative ones would signal process groups: never accept them.
  if (typeof record.pid !== 'number' || !Number.isInteger(record.pid) || record.pid <= 0) return null;
  return {
    pid: record.pid,
    processStart: typeof record.processStart === 'string' ? record.processStart : null,
    startedAt: typeof record.startedAt === 'string' ? record.startedAt : 'at an unknown time',
    port: typeof record.port === 'number' ? record.port : null,
    token: typeof record.token === 'string' ? record.token : '',
  };
}

function isAlive(holder: LockHolder): boolean {
  // Our own PID: a lock this process holds, or one left by an earlier process that had our PID
  // (in a container the instance often has the same small PID at every start).
  if (holder.pid === process.pid) return heldTokens.has(holder.token);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const start = processStart(holder.pid);
  return holder.processStart === null || start === null || start === holder.processStart;
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses). */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
