import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataPaths } from '../api-yaml/data-paths.js';
import { generatePublicHostKey } from './public-host-key.js';
import type { PublicHost, Registry } from './registry.js';

export const DEFAULT_ADMIN_HOST = 'admin.localhost';
export const DEFAULT_PUBLIC_HOST = 'localhost';

export interface DefaultHostsResult {
  publicHost: PublicHost;
  /** The key, when it was generated on this boot (printed once); null otherwise. */
  generatedKey: string | null;
}

/**
 * The default hosts exist on every boot: the admin host `admin.localhost` and the public host
 * `localhost` are created when missing. The public host key comes from ANVIL_PUBLIC_HOST_KEY, else
 * it is generated once and stored in the data dir. An explicit env or key given at start updates
 * the default public host.
 */
export function ensureDefaultHosts(
  registry: Registry,
  paths: DataPaths,
  options: { env: string; envExplicit: boolean; keyFromEnv: string | undefined },
): DefaultHostsResult {
  let generatedKey: string | null = null;
  if (registry.getHost(DEFAULT_ADMIN_HOST) === null) registry.addAdminHost(DEFAULT_ADMIN_HOST);
  if (registry.getHost(DEFAULT_PUBLIC_HOST) === null) {
    let key = options.keyFromEnv;
    if (key === undefined) {
      if (existsSync(paths.publicHostKeyFile)) key = readFileSync(paths.publicHostKeyFile, 'utf8').trim();
      else {
        key = generatePublicHostKey();
        generatedKey = key;
        mkdirSync(dirname(paths.publicHostKeyFile), { recursive: true });
        writeFileSync(paths.publicHostKeyFile, `${key}\n`, { mode: 0o600 });
      }
    }
    registry.addPublicHost({ name: DEFAULT_PUBLIC_HOST, key, env: options.env, path: null });
  }
  const existing = registry.getHost(DEFAULT_PUBLIC_HOST);
  if (existing === null || existing.kind !== 'public') {
    throw new Error(`"${DEFAULT_PUBLIC_HOST}" is registered as an admin host; it must be the default public host`);
  }
  const changes: { key?: string; env?: string } = {};
  if (options.keyFromEnv !== undefined && options.keyFromEnv !== existing.key) changes.key = options.keyFromEnv;
  if (options.envExplicit && options.env !== existing.env) changes.env = options.env;
  if (Object.keys(changes).length > 0) registry.updatePublicHost(DEFAULT_PUBLIC_HOST, changes);
  return { publicHost: registry.getHost(DEFAULT_PUBLIC_HOST) as PublicHost, generatedKey };
}
