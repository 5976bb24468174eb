import { mkdirSync } from 'node:fs';
import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { acquireDataDirLock, type DataDirLock } from '../../deploy/registry/data-dir-lock.js';

/**
 * Takes the data directory's instance lock. It comes before anything else reads or writes the data
 * directory: a refused second instance changes nothing.
 */
export function lockDataDir(paths: DataPaths, log: InstanceLog): DataDirLock {
  mkdirSync(paths.platformDir, { recursive: true });
  const lock = acquireDataDirLock(paths.root, paths.instanceLockFile);
  if (lock.tookOver) {
    const previous = lock.tookOverFrom;
    log.warn(
      { lockFile: paths.instanceLockFile, previousPid: previous?.pid ?? null },
      previous === null
        ? 'took over an unreadable instance lock'
        : `took over the instance lock of PID ${previous.pid}, which is no longer running`,
    );
  }
  return lock;
}

/** Records the port the instance listens on in its lock (for the message a second instance gets). */
export function notePort(lock: DataDirLock, port: number, paths: DataPaths, log: InstanceLog): void {
  try {
    lock.notePort(port);
  } catch (error) {
    log.warn({ err: error, lockFile: paths.instanceLockFile }, 'could not record the port in the instance lock');
  }
}
