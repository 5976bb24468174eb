import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import { formatActorId } from '../../shared/protocol/api-id.js';
import type { ActorSpec } from '../../shared/protocol/cell-messages.js';
import type { ApiRecord, HostRecord, PublicHost, Registry } from '../../deploy/registry/registry.js';

export interface ApiEntry {
  host: PublicHost;
  record: ApiRecord;
  spec: ActorSpec;
}

/**
 * The router's in-memory copy of the registry: hosts by name and APIs by host and key, so a request
 * costs map lookups, never a query. Reloaded after our own writes and whenever another process
 * (the CLI) wrote to the registry file.
 */
export class ApiDirectory {
  private hosts = new Map<string, HostRecord>();
  private apis = new Map<string, Map<string, ApiEntry>>();
  private dataVersion = -1;

  constructor(
    private readonly registry: Registry,
    private readonly paths: DataPaths,
    private readonly localBaseUrl: () => string,
    private readonly sandbox: ActorSpec['sandbox'],
    private readonly quotas: ActorSpec['quotas'],
    private readonly stores: ActorSpec['stores'],
    private readonly egressAllow: string | null,
    private readonly maxJsonDepth: number,
    /** Called with the actor ids that are no longer current after a reload. */
    private readonly onSuperseded: (actorIds: string[]) => void,
  ) {}

  host(name: string): HostRecord | undefined {
    return this.hosts.get(name);
  }

  publicHosts(): PublicHost[] {
    return [...this.hosts.values()].filter((h): h is PublicHost => h.kind === 'public');
  }

  /** The APIs of a public host, by key. */
  apisOf(host: string): IterableIterator<ApiEntry> {
    return (this.apis.get(host) ?? new Map<string, ApiEntry>()).values();
  }

  api(host: string, key: string): ApiEntry | undefined {
    return this.apis.get(host)?.get(key);
  }

  /** Reloads if another connection wrote since the last load. */
  refreshIfChanged(): void {
    if (this.registry.dataVersion() !== this.dataVersion) this.reload();
  }

  reload(): void {
    this.dataVersion = this.registry.dataVersion();
    const before = new Set<string>();
    for (const byKey of this.apis.values())
      for (const entry of byKey.values()) if (entry.record.active) before.add(entry.spec.id);

    const hosts = new Map<string, HostRecord>();
    for (const host of this.registry.listHosts()) hosts.set(host.name, host);
    const apis = new Map<string, Map<string, ApiEntry>>();
    for (const api of this.registry.listApis()) {
      const host = hosts.get(api.host);
      if (host === undefined || host.kind !== 'public') continue;
      const { host: _hostName, ...record } = api;
      let byKey = apis.get(host.name);
      if (byKey === undefined) apis.set(host.name, (byKey = new Map()));
      byKey.set(record.key, { host, record, spec: this.specFor(host, record) });
    }
    this.hosts = hosts;
    this.apis = apis;

    for (const byKey of apis.values())
      for (const entry of byKey.values()) if (entry.record.active) before.delete(entry.spec.id);
    if (before.size > 0) this.onSuperseded([...before]);
  }

  private specFor(host: PublicHost, record: ApiRecord): ActorSpec {
    const { paths } = this;
    return {
      id: formatActorId({ host: host.name, env: host.env, key: record.key }, record.release),
      host: host.name,
      env: host.env,
      key: record.key,
      release: record.release,
      releaseDir: paths.releaseFiles(host.name, record.key, record.release),
      compiledFile: paths.compiledFile(host.name, record.key, record.release),
      dataDir: paths.apiDataDir(host.name, host.env, record.key),
      localBaseUrl: this.localBaseUrl(),
      sandbox: this.sandbox,
      quotas: this.quotas,
      stores: this.stores,
      egressAllow: this.egressAllow,
      maxJsonDepth: this.maxJsonDepth,
    };
  }
}
