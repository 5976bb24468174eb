import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/audit/audit-entry.js';
import { SqliteAuditStore } from '../../src/audit/sqlite-audit-store.js';
import { useTempDir } from '../helpers/temp-dir.js';

// The audit log's embedded store (a real SQLite file): append-only, retention by age and by count.

const tmp = useTempDir('anvil-audit-store-');
const DAY = 24 * 60 * 60 * 1000;

function record(timeMs: number, more: Partial<AuditRecord> = {}): AuditRecord {
  return { timeMs, action: 'deploy', host: 'localhost', api: 'a', release: null, result: 'ok', status: 201, error: null, address: '127.0.0.1', keyFingerprint: 'abcdef012345', origin: 'http', detail: null, ...more };
}

describe('SqliteAuditStore', () => {
  it('removes entries older than the retention days, then beyond its rows', async () => {
    const store = SqliteAuditStore.open(join(tmp.path(), 'audit.sqlite'));
    try {
      const now = Date.now();
      for (const age of [40, 31, 29, 2, 1, 0]) await store.append(record(now - age * DAY, { api: `age-${age}` }));
      expect(await store.prune({ days: 30, rows: 1000 }, now)).toBe(2);
      let page = await store.list({ host: 'localhost', limit: 10 });
      expect(page.entries.map((e) => e.api)).toEqual(['age-0', 'age-1', 'age-2', 'age-29']);
      expect(await store.prune({ days: 30, rows: 3 }, now)).toBe(1);
      page = await store.list({ host: 'localhost', limit: 10 });
      expect(page.entries.map((e) => e.api)).toEqual(['age-0', 'age-1', 'age-2']);
    } finally {
      store.close();
    }
  });

  it('refuses to change an entry', async () => {
    const file = join(tmp.path(), 'audit.sqlite');
    const store = SqliteAuditStore.open(file);
    await store.append(record(Date.now()));
    store.close();
    const db = new Database(file);
    try {
      expect(() => db.prepare("UPDATE audit SET result = 'ok', key_fingerprint = NULL").run()).toThrow(/append-only/);
    } finally {
      db.close();
    }
  });

  it('lists a host with the instance-wide entries, and finds the CLI entries after a number', async () => {
    const store = SqliteAuditStore.open(join(tmp.path(), 'audit.sqlite'));
    try {
      await store.append(record(1, { host: 'localhost' }));
      await store.append(record(2, { host: 'other.localhost' }));
      const wide = await store.append(record(3, { host: null, action: 'host-add', origin: 'cli', address: null, keyFingerprint: null }));
      expect((await store.list({ host: 'localhost', limit: 10 })).entries.map((e) => e.host)).toEqual([null, 'localhost']);
      expect((await store.since(0, 'cli', 10)).map((e) => e.id)).toEqual([wide]);
      expect(await store.since(wide, 'cli', 10)).toEqual([]);
      expect(await store.lastId()).toBe(wide);
    } finally {
      store.close();
    }
  });
});
