import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Tests run what the build made (dist/): instances start bin/anvil.js, cells and threads load
// dist/. `npm test` builds first; a plain `npx vitest` after an edit would test the old build,
// silently. So: when anything the build reads is newer than everything it wrote, build now.
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const INPUTS = ['src', 'scripts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

/** The newest modification time under `path` (a file or a folder), 0 when it does not exist. */
function newest(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

export default function setup(): void {
  const built = newest(join(root, 'dist'));
  const source = Math.max(...INPUTS.map((p) => newest(join(root, p))));
  // The console's vendored chart library (console/vendor/, gitignored) is written by the build too.
  const vendored = existsSync(join(root, 'console', 'vendor', 'uPlot.esm.js'));
  if (built >= source && vendored) return;
  process.stderr.write(
    built === 0
      ? 'vitest: dist/ is missing; building it (npm run build)\n'
      : 'vitest: dist/ is older than the sources; rebuilding it (npm run build)\n',
  );
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
}
