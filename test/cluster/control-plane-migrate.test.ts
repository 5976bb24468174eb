import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { migrateControlPlane } from '../../src/deploy/control-plane/pg-schema.js';
import { FreshPostgres } from '../helpers/postgres.js';

// The control plane's tables are migrated once, under an advisory lock, however many instances
// start at the same moment.

let db: FreshPostgres;
const pools: pg.Pool[] = [];

beforeAll(async () => {
  db = await FreshPostgres.create();
});
afterAll(async () => {
  await Promise.all(pools.map(endPool));
  await db?.drop();
});

/**
 * Ends a pool once its connections have closed. pg's `Pool.end()` resolves as soon as it has asked
 * them to close; the drop (WITH FORCE) then cut one still closing, whose FATAL message the pool
 * re-emitted as an 'error' nobody listened to: an uncaught exception in the test worker (seen in CI
 * once the integration files shared their worker). pg-pool emits 'remove' as each one has closed.
 */
async function endPool(p: pg.Pool): Promise<void> {
  let open = p.totalCount;
  const closed = new Promise<void>((resolve) => {
    if (open === 0) resolve();
    p.on('remove', () => {
      if (--open === 0) resolve();
    });
  });
  await p.end();
  await closed;
}

function pool(): pg.Pool {
  const p = new pg.Pool({ connectionString: db.url, max: 2 });
  pools.push(p);
  return p;
}

describe('migrating the control plane', () => {
  it('applies each migration once when two instances start at once', async () => {
    const applied = await Promise.all([migrateControlPlane(pool(), 'first'), migrateControlPlane(pool(), 'second')]);
    const rows = await db.query<{ version: number; applied_by: string }>(
      'SELECT version, applied_by FROM anvil_registry.migrations ORDER BY version',
    );
    expect(rows.map((r) => r.version)).toEqual([1, 2]);
    expect(applied.sort()).toEqual([0, 2]);
    expect(await db.query('SELECT version FROM anvil_registry.state')).toEqual([{ version: '0' }]);
    // A later start finds nothing to do.
    expect(await migrateControlPlane(pool(), 'third')).toBe(0);
  });

  it('refuses a database migrated by a newer Anvil, saying so', async () => {
    await db.query("INSERT INTO anvil_registry.migrations (version, applied_by) VALUES (99, 'future')");
    await expect(migrateControlPlane(pool(), 'old')).rejects.toThrow(
      /schema version 99 is newer than this Anvil's \(2\)/,
    );
    await db.query('DELETE FROM anvil_registry.migrations WHERE version = 99');
  });
});
