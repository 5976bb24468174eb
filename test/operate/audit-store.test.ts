import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/front/audit/audit-entry.js';
import { SqliteAuditStore } from '../../src/front/audit/sqlite-audit-store.js';
import { useTempDir } from '../helpers/temp-dir.js';

// The audit log's embedded store (a real SQLite file): append-only, retention by age and by count
// per host.

const tmp = useTempDir('anvil-audit-store-');
const DAY = 24 * 60 * 60 * 1000;

function record(timeMs: number, more: Partial<AuditRecord> = {}): AuditRecord {
  return {
    timeMs,
    action: 'deploy',
    host: 'localhost',
    api: 'a',
    release: null,
    result: 'ok',
    status: 201,
    error: null,
    address: '127.0.0.1',
    keyFingerprint: 'abcdef012345',
    origin: 'http',
    detail: null,
    ...more,
  };
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

  it('keeps the newest rows of each host, and of the instance-wide entries apart', async () => {
    const store = SqliteAuditStore.open(join(tmp.path(), 'audit.sqlite'));
    try {
      const now = Date.now();
      await store.append(record(now, { host: 'b.localhost', api: 'b-1' }));
      await store.append(record(now, { host: null, api: 'wide-1' }));
      await store.append(record(now, { host: 'b.localhost', api: 'b-2' }));
      for (let i = 1; i <= 10; i++) {
        await store.append(record(now, { host: 'localhost', api: `a-${i}` }));
        expect(await store.trim('localhost', 3)).toBe(i > 3 ? 1 : 0);
      }
      const names = async (host: string) => (await store.list({ host, limit: 100 })).entries.map((e) => e.api);
      expect(await names('localhost')).toEqual(['a-10', 'a-9', 'a-8', 'wide-1']);
      expect(await names('b.localhost')).toEqual(['b-2', 'wide-1', 'b-1']);
      // The hourly pass trims every host over its rows, the instance-wide entries as one more.
      for (let i = 2; i <= 4; i++) await store.append(record(now, { host: null, api: `wide-${i}` }));
      expect(await store.prune({ days: 30, rows: 2 }, now)).toBe(1 + 2);
      expect(await names('localhost')).toEqual(['wide-4', 'wide-3', 'a-10', 'a-9']);
      expect(await names('b.localhost')).toEqual(['wide-4', 'wide-3', 'b-2', 'b-1']);
    } finally {
      store.close();
    }
  });

  it('counts the entries of a file written before retention was per host', async () => {
    const file = join(tmp.path(), 'audit.sqlite');
    const old = new Database(file);
    old.exec(`CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, time_ms INTEGER NOT NULL, action TEXT NOT NULL, host TEXT, api TEXT, release TEXT,
      result TEXT NOT NULL, status INTEGER, error TEXT, address TEXT, key_fingerprint TEXT, origin TEXT NOT NULL, detail TEXT)`);
    const insert = old.prepare(
      "INSERT INTO audit (time_ms, action, host, api, result, origin) VALUES (?, 'deploy', ?, ?, 'ok', 'http')",
    );
    for (let i = 1; i <= 5; i++) insert.run(Date.now(), 'localhost', `a-${i}`);
    insert.run(Date.now(), 'b.localhost', 'b-1');
    old.close();
    const store = SqliteAuditStore.open(file);
    try {
      expect(await store.trim('localhost', 2)).toBe(3);
      expect(await store.trim('b.localhost', 2)).toBe(0);
      expect((await store.list({ host: 'b.localhost', limit: 10 })).entries.map((e) => e.api)).toEqual(['b-1']);
      expect((await store.list({ host: 'localhost', limit: 10 })).entries.map((e) => e.api)).toEqual(['a-5', 'a-4']);
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
      const wide = await store.append(
        record(3, { host: null, action: 'host-add', origin: 'cli', address: null, keyFingerprint: null }),
      );
      expect((await store.list({ host: 'localhost', limit: 10 })).entries.map((e) => e.host)).toEqual([
        null,
        'localhost',
      ]);
      expect((await store.since(0, 'cli', 10)).map((e) => e.id)).toEqual([wide]);
      expect(await store.since(wide, 'cli', 10)).toEqual([]);
      expect(await store.lastId()).toBe(wide);
    } finally {
      store.close();
    }
  });
});
