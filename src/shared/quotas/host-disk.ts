/**
 * The disk total of a public host (`--max-host-disk`): everything under `<data>/<host>/` (its APIs'
 * databases with their logs, files, caches and request logs). The router measures the folders
 * (front/scheduling/host-disk-watch.ts) and, while a host is over, keeps a marker file for it under
 * `<data>/.anvil/host-disk/` (a name no host can have) saying what it measured. An actor thread
 * looks for its host's marker before a write that makes data grow, at most once a second, and
 * refuses the write while it is there; deletes pass, so the tenant can make room. A file, not a
 * message, because every cell and thread of the host must see it and none of them may write it.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Errors, type QuotaError } from '../errors.js';

/** How long a thread trusts what it last read of its host's marker. */
const LOOK_EVERY_MS = 1_000;

export interface HostDiskMark {
  usedBytes: number;
  maxBytes: number;
}

export function hostDiskFolder(dataRoot: string): string {
  return join(dataRoot, '.anvil', 'host-disk');
}

function markerFile(dataRoot: string, host: string): string {
  return join(hostDiskFolder(dataRoot), `${host}.json`);
}

/** The router's side: marks a host over its total, or clears it. */
export function markHostOverDisk(dataRoot: string, host: string, mark: HostDiskMark): void {
  mkdirSync(hostDiskFolder(dataRoot), { recursive: true });
  const file = markerFile(dataRoot, host);
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify(mark));
  renameSync(tmp, file);
}

export function clearHostOverDisk(dataRoot: string, host: string): void {
  rmSync(markerFile(dataRoot, host), { force: true });
}

/** A thread's side, for one API: `check()` throws the host's refusal while its marker is there. */
export class HostDiskGate {
  private readonly file: string;
  private lookedAt = Number.NEGATIVE_INFINITY;
  private mark: HostDiskMark | null = null;

  /** `apiDataDir` is `<data>/<host>/<env>/<key>`. */
  constructor(
    apiDataDir: string,
    private readonly host: string,
    private readonly refusals: { add(quota: string): void },
  ) {
    this.file = markerFile(resolve(apiDataDir, '..', '..', '..'), host);
  }

  /** Before a write that makes the API's data grow. */
  check(): void {
    const refusal = this.refusal();
    if (refusal === null) return;
    this.refusals.add(refusal.quota);
    throw refusal;
  }

  /** The refusal while the host is over its total, else null (not counted: the caller counts it). */
  refusal(): QuotaError | null {
    const now = Date.now();
    if (now - this.lookedAt >= LOOK_EVERY_MS) {
      this.lookedAt = now;
      this.mark = readMark(this.file);
    }
    return this.mark === null ? null : Errors.quotaHostDisk(this.host, this.mark.usedBytes, this.mark.maxBytes);
  }
}

function readMark(file: string): HostDiskMark | null {
  try {
    const mark = JSON.parse(readFileSync(file, 'utf8')) as Partial<HostDiskMark>;
    return { usedBytes: Number(mark.usedBytes) || 0, maxBytes: Number(mark.maxBytes) || 0 };
  } catch {
    return null;
  }
}

/** What an API's runtime gives the gate (structurally: quotas/ does not depend on the engine). */
interface GatedApi {
  readonly dataDir: string;
  readonly host: string;
  readonly refusals: { add(quota: string): void };
  resource<T>(name: string, create: () => T): T;
}

/** The API's gate, one per actor thread. */
export function hostDiskGate(api: GatedApi): HostDiskGate {
  return api.resource('host-disk', () => new HostDiskGate(api.dataDir, api.host, api.refusals));
}
