import { existsSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import type { DataPaths } from '../api-yaml/data-paths.js';
import { DEFAULT_ADMIN_HOST, DEFAULT_PUBLIC_HOST, type DefaultHostsResult } from '../registry/default-hosts.js';
import { generatePublicHostKey } from '../registry/public-host-key.js';
import { checkEnv, checkHostKey } from '../registry/record-checks.js';
import type { PublicHost } from '../registry/records.js';
import { HOSTS_LOCK, LOCK_CLASS } from './pg-locks.js';
import { SCHEMA } from './pg-schema.js';
import { bumpVersion } from './pg-writes.js';

/**
 * The default hosts in cluster mode, as `ensureDefaultHosts` does locally, in one transaction under
 * the hosts' lock: the first instance to start creates them, and the public host key it uses (from
 * ANVIL_PUBLIC_HOST_KEY, its data dir's key file, or generated) is the one every instance shares.
 * An explicit env or key given at start updates the shared host.
 */
export async function ensureClusterDefaultHosts(
  db: pg.ClientBase,
  paths: DataPaths,
  options: { env: string; envExplicit: boolean; keyFromEnv: string | undefined },
): Promise<DefaultHostsResult> {
  await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, HOSTS_LOCK]);
  let changed = false;
  let generatedKey: string | null = null;
  const admin = await db.query(
    `INSERT INTO ${SCHEMA}.hosts (name, kind) VALUES ($1, 'admin') ON CONFLICT (name) DO NOTHING`,
    [DEFAULT_ADMIN_HOST],
  );
  changed ||= admin.rowCount === 1;

  let existing = await readHost(db);
  if (existing === null) {
    let key = options.keyFromEnv;
    if (key === undefined && existsSync(paths.publicHostKeyFile))
      key = readFileSync(paths.publicHostKeyFile, 'utf8').trim();
    if (key === undefined) key = generatedKey = generatePublicHostKey();
    await db.query(`INSERT INTO ${SCHEMA}.hosts (name, kind, key, env, path) VALUES ($1, 'public', $2, $3, NULL)`, [
      DEFAULT_PUBLIC_HOST,
      checkHostKey(key),
      checkEnv(options.env),
    ]);
    changed = true;
    existing = (await readHost(db))!;
  }
  if (existing.kind !== 'public')
    throw new Error(`"${DEFAULT_PUBLIC_HOST}" is registered as an admin host; it must be the default public host`);
  const key = options.keyFromEnv !== undefined ? checkHostKey(options.keyFromEnv) : existing.key;
  const env = options.envExplicit ? checkEnv(options.env) : existing.env;
  if (key !== existing.key || env !== existing.env) {
    await db.query(`UPDATE ${SCHEMA}.hosts SET key = $2, env = $3 WHERE name = $1`, [DEFAULT_PUBLIC_HOST, key, env]);
    changed = true;
  }
  if (changed) await bumpVersion(db);
  return { publicHost: { name: DEFAULT_PUBLIC_HOST, kind: 'public', key, env, path: existing.path }, generatedKey };
}

async function readHost(db: pg.ClientBase): Promise<(Omit<PublicHost, 'kind'> & { kind: string }) | null> {
  const { rows } = await db.query<{ name: string; kind: string; key: string; env: string; path: string | null }>(
    `SELECT name, kind, key, env, path FROM ${SCHEMA}.hosts WHERE name = $1`,
    [DEFAULT_PUBLIC_HOST],
  );
  return rows[0] ?? null;
}
