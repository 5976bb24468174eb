import type { DeleteApiResult, UpdateApiResult } from '../registry/records.js';

/**
 * Where the management API's writes go. The local registry (SQLite) stays the synchronous read path
 * of every request; a control plane changes it. Embedded (one instance): writes go straight into
 * the local registry. Cluster (`DATABASE_URL`): writes go to Postgres, and every instance's local
 * registry is a replica of it. Each write resolves once this instance's replica shows it.
 */
export interface ControlPlane {
  /** True when other instances fetch release files from the control plane: deploys then pack them. */
  readonly sharesReleaseFiles: boolean;
  /**
   * Records a new current release whose folder is already at its place in the data directory. With
   * `reuseUnchanged`, an API whose current release has the same digest keeps it (`created: false`).
   * `pruned`: earlier releases beyond the kept ones, oldest first (their folders are the caller's to delete).
   */
  recordRelease(release: NewRelease): Promise<RecordedRelease>;
  /** Flags and current release (publish, disable, rollback). */
  updateApi(host: string, key: string, change: ApiChange): Promise<UpdateApiResult>;
  /** Refused while the API is active. */
  deleteApi(host: string, key: string): Promise<DeleteApiResult>;
  close(): Promise<void>;
}

export interface ApiChange {
  active: boolean;
  release: string;
  public: boolean;
}

export interface NewRelease {
  host: string;
  key: string;
  release: string;
  digest: string;
  reuseUnchanged: boolean;
  /** With `sharesReleaseFiles`: the release's files as a .tar.gz, and its compiled.json text. */
  shared: { archive: Buffer; compiled: string } | null;
}

export interface RecordedRelease {
  /** The current release: the new one, or the unchanged one kept. */
  release: string;
  created: boolean;
  pruned: string[];
}
