import { describe, expect, it } from 'vitest';
import { cellAllocator, cellPreloadEnv, TCMALLOC_FOLDERS } from '../../src/cell/process/cell-allocator.js';

const debianTcmalloc = '/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4';
const only =
  (...paths: string[]) =>
  (path: string) =>
    paths.includes(path);

describe('cellAllocator (ANVIL_CELL_MALLOC)', () => {
  it('finds tcmalloc where Debian puts it when unset or auto', () => {
    expect(TCMALLOC_FOLDERS).toContain('/usr/lib/x86_64-linux-gnu');
    for (const setting of [null, '', 'auto']) {
      expect(cellAllocator(setting, null, only(debianTcmalloc), 'linux')).toEqual({
        preload: debianTcmalloc,
        description: `tcmalloc (${debianTcmalloc})`,
      });
    }
  });

  it('falls back to the system allocator, saying what to install, when tcmalloc is not there', () => {
    const allocator = cellAllocator(null, null, only(), 'linux');
    expect(allocator.preload).toBeNull();
    expect(allocator.description).toContain('libtcmalloc-minimal4');
  });

  it('preloads nothing off Linux, nor when the instance was started with an LD_PRELOAD of its own', () => {
    expect(cellAllocator(null, null, only(debianTcmalloc), 'darwin').preload).toBeNull();
    const inherited = cellAllocator('auto', '/opt/jemalloc/libjemalloc.so', only(debianTcmalloc), 'linux');
    expect(inherited).toEqual({
      preload: null,
      description: 'the LD_PRELOAD it was started with (/opt/jemalloc/libjemalloc.so)',
    });
    expect(cellPreloadEnv(inherited, '/opt/jemalloc/libjemalloc.so')).toEqual({});
  });

  it('uses the system allocator when told to, even with tcmalloc installed', () => {
    expect(cellAllocator('system', null, only(debianTcmalloc), 'linux').preload).toBeNull();
  });

  it('takes an absolute path that exists, and refuses one that does not, a relative one, or a word it does not know', () => {
    expect(cellAllocator('/opt/lib/libmine.so', null, only('/opt/lib/libmine.so'), 'linux').preload).toBe(
      '/opt/lib/libmine.so',
    );
    expect(() => cellAllocator('/opt/lib/missing.so', null, only(), 'linux')).toThrow(
      'ANVIL_CELL_MALLOC: /opt/lib/missing.so does not exist',
    );
    expect(() => cellAllocator('libtcmalloc.so', null, only(), 'linux')).toThrow(
      'neither auto, system, nor an absolute path',
    );
    expect(() => cellAllocator('jemalloc', null, only(), 'linux')).toThrow('ANVIL_CELL_MALLOC: "jemalloc"');
  });

  it("puts the allocator first in the cell's LD_PRELOAD, before an inherited one", () => {
    const mine = cellAllocator('/opt/lib/libmine.so', '/opt/lib/libtrace.so', only('/opt/lib/libmine.so'), 'linux');
    expect(cellPreloadEnv(mine, '/opt/lib/libtrace.so')).toEqual({
      LD_PRELOAD: '/opt/lib/libmine.so /opt/lib/libtrace.so',
    });
    expect(cellPreloadEnv(mine, undefined)).toEqual({ LD_PRELOAD: '/opt/lib/libmine.so' });
    expect(cellPreloadEnv(undefined, undefined)).toEqual({});
  });
});
