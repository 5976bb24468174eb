import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type pg from 'pg';
import type { DataPaths } from '../api-yaml/data-paths.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { Registry, RegistryContents } from '../registry/registry.js';
import { ChangeListener } from './change-listener.js';
import { installRelease } from './install-release.js';
import { readContents, readVersion } from './pg-reads.js';

/** How often the version is polled, for the notices a LISTEN connection missed. */
export const POLL_MS = 1_000;

/** What one sync changed, for the instance to act on (reload its directory, retire deleted APIs). */
export interface AppliedChange {
  /** APIs no longer in the registry, with the env their data lived under. */
  removed: Array<{ host: string; env: string; key: string }>;
}

/**
 * Keeps the local registry a replica of the control plane's: on a NOTIFY (LISTEN on its own
 * connection), on a version poll every second, and when this instance wrote. A sync copies the
 * whole registry from one snapshot: first the release files it lacks (fetched by digest, checked,
 * unpacked into the release cache), then the rows in one SQLite transaction, then the release
 * folders that left the registry are deleted. Syncs run one at a time; a request for one while
 * another runs is served by the next.
 */
export class ReplicaSync {
  private version = -1;
  /** A release could not be installed: the next poll syncs again even without a new version. */
  private incomplete = false;
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;
  private poller: NodeJS.Timeout | undefined;
  private listener: ChangeListener | null = null;
  private reachable = true;
  private onApplied: (change: AppliedChange) => void = () => undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    private readonly registry: Registry,
    private readonly paths: DataPaths,
    private readonly log: InstanceLog,
  ) {}

  /** The first sync (its failure fails the start), then LISTEN and the poll. */
  async start(): Promise<void> {
    await this.syncNow();
    this.listener = new ChangeListener(this.url, this.log, () => void this.syncNow().catch(() => undefined));
    await this.listener.start();
    this.poller = setInterval(() => void this.poll(), POLL_MS);
    this.poller.unref();
  }

  /** Called after each sync that changed something (the directory exists only once the instance is wired). */
  whenApplied(callback: (change: AppliedChange) => void): void {
    this.onApplied = callback;
  }

  /** Resolves once a sync that started after this call has finished. */
  syncNow(): Promise<void> {
    if (this.queued !== null) return this.queued;
    const next = this.chain.then(() => {
      this.queued = null;
      return this.syncOnce();
    });
    this.queued = next;
    this.chain = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    clearInterval(this.poller);
    await this.listener?.close();
    await this.chain;
  }

  private async poll(): Promise<void> {
    try {
      const version = await readVersion(this.pool);
      this.noteReachable(true, null);
      if (version !== this.version || this.incomplete) await this.syncNow();
    } catch (error) {
      this.noteReachable(false, error);
    }
  }

  private async syncOnce(): Promise<void> {
    const { version, contents } = await readContents(this.pool);
    if (version === this.version && !this.incomplete) return;
    this.incomplete = false;
    for (const release of contents.releases) {
      if (existsSync(this.paths.compiledFile(release.host, release.key, release.release))) continue;
      await installRelease(this.pool, this.paths, release).catch((error: unknown) => {
        this.incomplete = true;
        this.log.error(
          { err: error, host: release.host, api: release.key, release: release.release },
          'a release could not be copied from the control plane; retrying',
        );
      });
    }
    const before = this.currentContents();
    this.registry.replaceContents(contents);
    this.version = version;
    const removed = await this.dropLeftReleases(before, contents);
    this.onApplied({ removed });
  }

  private currentContents(): { releases: Set<string>; apis: Array<{ host: string; env: string; key: string }> } {
    const envs = new Map(
      this.registry.listHosts().flatMap((h) => (h.kind === 'public' ? [[h.name, h.env] as const] : [])),
    );
    const releases = new Set<string>();
    const apis: Array<{ host: string; env: string; key: string }> = [];
    for (const api of this.registry.listApis()) {
      apis.push({ host: api.host, env: envs.get(api.host) ?? '', key: api.key });
      for (const release of [api.release, ...api.releases]) releases.add(`${api.host}/${api.key}/${release}`);
    }
    return { releases, apis };
  }

  /** Deletes the folders of releases the last registry had and this one has not (never a deploy's folder not yet recorded). */
  private async dropLeftReleases(
    before: ReturnType<ReplicaSync['currentContents']>,
    after: RegistryContents,
  ): Promise<AppliedChange['removed']> {
    const kept = new Set(after.releases.map((r) => `${r.host}/${r.key}/${r.release}`));
    for (const id of before.releases) {
      if (kept.has(id)) continue;
      const [host, key, release] = id.split('/') as [string, string, string];
      await rm(this.paths.releaseDir(host, key, release), { recursive: true, force: true });
    }
    const apis = new Set(after.apis.map((a) => `${a.host}/${a.key}`));
    return before.apis.filter((a) => !apis.has(`${a.host}/${a.key}`));
  }

  private noteReachable(reachable: boolean, error: unknown): void {
    if (reachable === this.reachable) return;
    this.reachable = reachable;
    if (reachable) this.log.info({}, 'control plane reachable again: management writes are accepted');
    else
      this.log.error(
        { err: error },
        'control plane (PostgreSQL) unreachable: management writes are refused, the APIs keep serving from the local replica',
      );
  }
}
