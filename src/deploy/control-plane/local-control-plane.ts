import type { Registry } from '../registry/registry.js';
import type { DeleteApiResult, UpdateApiResult } from '../registry/records.js';
import type { ApiChange, ControlPlane, NewRelease, RecordedRelease } from './control-plane.js';

/** One instance: the local registry is the source of truth, and every write is synchronous. */
export class LocalControlPlane implements ControlPlane {
  readonly sharesReleaseFiles = false;

  constructor(private readonly registry: Registry) {}

  async recordRelease(r: NewRelease): Promise<RecordedRelease> {
    const current = this.registry.getApi(r.host, r.key);
    if (r.reuseUnchanged && current !== null && this.registry.currentDigest(r.host, r.key) === r.digest) {
      return { release: current.release, created: false, pruned: [] };
    }
    const { pruned } = this.registry.recordRelease(r.host, r.key, r.release, r.digest);
    return { release: r.release, created: true, pruned };
  }

  async updateApi(host: string, key: string, change: ApiChange): Promise<UpdateApiResult> {
    return this.registry.updateApi(host, key, change);
  }

  async deleteApi(host: string, key: string): Promise<DeleteApiResult> {
    return this.registry.deleteApi(host, key);
  }

  async close(): Promise<void> {}
}
