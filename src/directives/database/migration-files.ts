/**
 * The migration files of a release (`Assets/db/*.sql`, or `Assets/sql/*.sql` without that folder),
 * for both database modes (api-database.ts, postgres/pg-migrate.ts).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function migrationFolder(releaseDir: string): { path: string; label: string } | null {
  for (const label of ['Assets/db', 'Assets/sql']) {
    const path = join(releaseDir, ...label.split('/'));
    try {
      if (statSync(path).isDirectory()) return { path, label };
    } catch {
      // not there
    }
  }
  return null;
}

/** `*.sql` regular files, by file name (code-unit order, the same on every machine). */
export function migrationFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.sql'))
    .map((entry) => entry.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
