import type { HostRecord } from '../registry/records.js';

/** What `anvil hosts` changes: the local registry, or the control plane in cluster mode. */
export interface HostStore {
  listHosts(): Promise<HostRecord[]>;
  addAdminHost(name: string): Promise<void>;
  addPublicHost(host: { name: string; key: string; env: string; path: string | null }): Promise<void>;
  /** False when no such host; refused while a public host still has APIs. */
  removeHost(name: string): Promise<boolean>;
  close(): Promise<void>;
}
