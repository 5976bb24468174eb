import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/**
 * A fresh temporary folder for each test of the calling file, removed afterwards. `path()` is the
 * folder; `put(relative, content)` writes a file in it (an object as JSON), making folders on the way.
 */
export function useTempDir(prefix = 'anvil-test-'): {
  path(): string;
  put(relative: string, content: string | object): Promise<void>;
} {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return {
    path: () => dir,
    put: async (relative, content) => {
      const file = join(dir, relative);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    },
  };
}
