import { renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileRefOf, openFileRef, readFileRefSync } from '../../src/shared/protocol/file-ref.js';
import { useTempDir } from '../helpers/temp-dir.js';

// A file a thread checked and the router streams later: only that very file may be served.
describe('FileRef', () => {
  const temp = useTempDir('anvil-file-ref-');

  it('opens and reads the file that was checked', async () => {
    const path = join(temp.path(), 'a.bin');
    writeFileSync(path, 'checked bytes');
    const ref = fileRefOf(path, statSync(path));
    expect(readFileRefSync(ref).toString()).toBe('checked bytes');
    const handle = await openFileRef(ref);
    expect((await handle.readFile()).toString()).toBe('checked bytes');
    await handle.close();
  });

  it('refuses another file swapped in at the path, a link put in its place, or a change of size', async () => {
    const path = join(temp.path(), 'a.bin');
    writeFileSync(path, 'checked bytes');
    const ref = fileRefOf(path, statSync(path));
    const refused = { code: 'ANVIL_ERR_STATIC_CHANGED', status: 503 };

    writeFileSync(join(temp.path(), 'other.bin'), 'other  bytes!');
    renameSync(join(temp.path(), 'other.bin'), path);
    await expect(openFileRef(ref)).rejects.toMatchObject(refused);
    expect(() => readFileRefSync(ref)).toThrow(/changed while it was being served/);

    writeFileSync(join(temp.path(), 'secret'), 'checked bytes');
    const linked = join(temp.path(), 'link.bin');
    symlinkSync(join(temp.path(), 'secret'), linked);
    await expect(openFileRef({ ...fileRefOf(linked, statSync(join(temp.path(), 'secret'))) })).rejects.toMatchObject(
      refused,
    );

    const grown = join(temp.path(), 'grown.bin');
    writeFileSync(grown, 'short');
    const before = fileRefOf(grown, statSync(grown));
    writeFileSync(grown, 'longer now');
    await expect(openFileRef(before)).rejects.toMatchObject(refused);
  });
});
