/**
 * Keeps an API's log folder within its quota: files whose day ended more than `days` days ago go,
 * then the oldest files go while all of them together are larger than `totalBytes`. The file being
 * written is never removed, and counts as the size it may still grow to (`fileBytes`), so the folder
 * stays under `totalBytes` until the next rotation prunes again. Runs when a writer opens a file (a
 * new day, a rotation), not per line.
 */
import { lstatSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { listLogFiles } from './log-files.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionPolicy {
  fileBytes: number;
  totalBytes: number;
  days: number;
}

export interface Removed {
  age: number;
  size: number;
}

export function pruneLogs(dir: string, keep: string, policy: RetentionPolicy, now: number): Removed {
  const removed: Removed = { age: 0, size: 0 };
  const files: Array<{ name: string; bytes: number; dayEnd: number }> = [];
  let total = 0;
  for (const file of listLogFiles(dir)) {
    try {
      const stat = lstatSync(join(dir, file.name));
      if (!stat.isFile()) continue;
      const bytes = file.name === keep ? Math.max(stat.size, policy.fileBytes) : stat.size;
      files.push({ name: file.name, bytes, dayEnd: Date.parse(`${file.day}T00:00:00Z`) + DAY_MS });
      total += bytes;
    } catch {
      // Gone meanwhile (another thread of the API pruned it).
    }
  }
  for (const file of files) {
    if (file.name === keep) continue;
    const tooOld = file.dayEnd + policy.days * DAY_MS <= now;
    if (!tooOld && total <= policy.totalBytes) continue;
    if (!remove(join(dir, file.name))) continue;
    total -= file.bytes;
    removed[tooOld ? 'age' : 'size'] += 1;
  }
  return removed;
}

function remove(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}
