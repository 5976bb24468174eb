/**
 * The memory allocator of the cell processes (ANVIL_CELL_MALLOC). Cells start with tcmalloc's
 * minimal build (gperftools, Debian's `libtcmalloc-minimal4`) preloaded where it is installed.
 *
 * Why: isolated-vm allocates natively on every call into a sandbox (each string argument's copy, the
 * call's timeout timer, a callback's copied arguments and result), and frees much of it on another
 * thread (its timer thread). Under glibc's malloc that cost a custom directive request ~10 % of the
 * cell's CPU (measured here, bench/notes/custom-directive-profile.md: in-process /flow/custom
 * 14.4–16.8 → 12.9–14.8 µs, /flow/custom-item/7 23.9–27.1 → 21.4–23.1 µs; saturated, the cell's CPU
 * per ReadUser request 28.6–32.2 → 25.9–27.9 µs). The router keeps the system allocator: it was not
 * faster there.
 *
 * Settings: unset or `auto`, tcmalloc when found in a usual library folder (else the system's, and
 * the start log says so); `system`, the system allocator; an absolute path, that library (it must
 * exist). Cells already started with LD_PRELOAD (the operator's) keep it: `auto` adds nothing then.
 */
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';

const TCMALLOC = 'libtcmalloc_minimal.so.4';
/** Where Debian/Ubuntu (both architectures), Fedora/RHEL and source builds put it. */
export const TCMALLOC_FOLDERS: readonly string[] = [
  '/usr/lib/x86_64-linux-gnu',
  '/usr/lib/aarch64-linux-gnu',
  '/usr/lib64',
  '/usr/lib',
  '/usr/local/lib',
];

/** tcmalloc's minimal build in the first of TCMALLOC_FOLDERS that has it (only Linux is looked at), or undefined. */
export function findTcmalloc(
  exists: (path: string) => boolean = existsSync,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (platform !== 'linux') return undefined;
  return TCMALLOC_FOLDERS.map((folder) => `${folder}/${TCMALLOC}`).find((path) => exists(path));
}

export interface CellAllocator {
  /** The library the cells preload, or null: the system allocator (or the inherited LD_PRELOAD). */
  preload: string | null;
  /** For the start log. */
  description: string;
}

/**
 * Resolves ANVIL_CELL_MALLOC. Throws a message naming the variable when it cannot be honoured (a
 * path that is not there, a relative path, an unknown word).
 */
export function cellAllocator(
  setting: string | null,
  inheritedPreload: string | null,
  exists: (path: string) => boolean = existsSync,
  platform: NodeJS.Platform = process.platform,
): CellAllocator {
  const value = (setting ?? '').trim();
  if (value === 'system') return { preload: null, description: 'the system allocator (ANVIL_CELL_MALLOC=system)' };
  if (value === '' || value === 'auto') {
    const inherited = (inheritedPreload ?? '').trim();
    if (inherited !== '') return { preload: null, description: `the LD_PRELOAD it was started with (${inherited})` };
    const found = findTcmalloc(exists, platform);
    if (found !== undefined) return { preload: found, description: `tcmalloc (${found})` };
    return {
      preload: null,
      description: `the system allocator (no ${TCMALLOC} found: installing libtcmalloc-minimal4 saves ~10 % of a custom directive request's CPU)`,
    };
  }
  if (!isAbsolute(value))
    throw new Error(`ANVIL_CELL_MALLOC: "${value}" is neither auto, system, nor an absolute path to a shared library`);
  if (!exists(value)) throw new Error(`ANVIL_CELL_MALLOC: ${value} does not exist`);
  return { preload: value, description: `${value} (ANVIL_CELL_MALLOC)` };
}

/** The cell's LD_PRELOAD: the allocator first (it must be loaded before anything allocates), then any inherited one. */
export function cellPreloadEnv(
  allocator: CellAllocator | undefined,
  inheritedPreload: string | undefined,
): { LD_PRELOAD?: string } {
  if (allocator === undefined || allocator.preload === null) return {};
  const rest = (inheritedPreload ?? '').trim();
  return { LD_PRELOAD: rest === '' ? allocator.preload : `${allocator.preload} ${rest}` };
}
