/**
 * Measures each public host's folder of the data directory (`<data>/<host>/`: its APIs'
 * databases, files, caches and logs) every few seconds, as `du` would (allocated blocks), and marks
 * the hosts over `--max-host-disk` for their threads (shared/quotas/host-disk.ts). The walk is
 * asynchronous, one folder read at a time, so the router's requests go on meanwhile. The router
 * itself refuses the jobs of a host over it.
 */
import { rmSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { clearHostOverDisk, hostDiskFolder, markHostOverDisk } from '../../shared/quotas/host-disk.js';

/** `--max-host-disk` when not given: room for several APIs at their default quotas (database, files and logs 256 MiB each). */
export const DEFAULT_HOST_DISK_BYTES = 4 * 1024 ** 3;

/** Pause between the end of one round of measuring and the next. */
export const HOST_DISK_EVERY_MS = 2_000;

export class HostDiskWatch {
  private readonly over = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly dataRoot: string,
    /** Bytes a host may take; 0: no total. */
    readonly maxBytes: number,
    private readonly report: (error: unknown) => void,
  ) {}

  /** Markers an earlier run left go first: the first round marks again the hosts still over. */
  start(): void {
    rmSync(hostDiskFolder(this.dataRoot), { recursive: true, force: true });
    if (this.maxBytes <= 0) return;
    void this.round();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
  }

  /** Bytes the host took when last measured over its total; null while it is under (or not measured yet). */
  overBy(host: string): number | null {
    return this.over.get(host) ?? null;
  }

  private async round(): Promise<void> {
    try {
      const hosts = (await readdir(this.dataRoot, { withFileTypes: true })).filter(
        (entry) => entry.isDirectory() && !entry.name.startsWith('.'),
      );
      const seen = new Set<string>();
      for (const host of hosts) {
        if (this.stopped) return;
        seen.add(host.name);
        const used = await diskOf(join(this.dataRoot, host.name));
        if (used > this.maxBytes) {
          this.over.set(host.name, used);
          markHostOverDisk(this.dataRoot, host.name, { usedBytes: used, maxBytes: this.maxBytes });
        } else if (this.over.delete(host.name)) {
          clearHostOverDisk(this.dataRoot, host.name);
        }
      }
      for (const host of [...this.over.keys()]) {
        if (seen.has(host)) continue;
        this.over.delete(host);
        clearHostOverDisk(this.dataRoot, host);
      }
    } catch (error) {
      this.report(error);
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.round(), HOST_DISK_EVERY_MS);
    this.timer.unref();
  }
}

/** Allocated bytes of everything under `root` (folders included); links are not followed. */
async function diskOf(root: string): Promise<number> {
  let total = 0;
  const folders = [root];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(folder, name);
      const stat = await lstat(path).catch(() => null);
      if (stat === null) continue;
      total += stat.blocks * 512;
      if (stat.isDirectory()) folders.push(path);
    }
  }
  return total;
}
