/** What the registry stores and answers: hosts, API records and their releases. */

export interface PublicHost {
  name: string;
  kind: 'public';
  key: string;
  env: string;
  path: string | null;
}
export interface AdminHost {
  name: string;
  kind: 'admin';
}
export type HostRecord = PublicHost | AdminHost;

/** Exactly the JSON of `GET /anvil/api/<key>`. `releases`: the kept earlier releases, newest first. */
export interface ApiRecord {
  key: string;
  release: string;
  active: boolean;
  public: boolean;
  releases: string[];
  created_at: string;
  updated_at: string;
}

export interface StoredRelease {
  host: string;
  key: string;
  release: string;
  digest: string;
  created_at: string;
}

export type UpdateApiResult = 'ok' | 'unknown-api' | 'unknown-release';

/** `releases`: every release id the API had (current first, then newest to oldest), for deleting files. */
export type DeleteApiResult = { status: 'ok'; releases: string[] } | { status: 'unknown-api' } | { status: 'active' };
