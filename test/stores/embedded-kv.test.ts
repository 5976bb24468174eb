import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedKvBackend, embeddedKvFile } from '../../src/directives/stores/embedded-kv.js';
import type { KvBackend } from '../../src/engine/kv-store.js';
import { openKvBackend } from '../../src/directives/stores/open-kv.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { kvStoreContract } from './kv-contract.js';
import { raceIncrements } from './kv-workers.js';
import { windowCounterContract } from './window-counter-contract.js';

// The worker-thread tests load dist/directives/stores (build first: `npx tsc -p tsconfig.build.json`; npm test does it in pretest).

const temp = useTempDir('anvil-kv-');
let clock = 0;
beforeEach(() => {
  clock = Date.now();
});

kvStoreContract(
  'embedded (SQLite)',
  async () => EmbeddedKvBackend.open({ dataDir: temp.path(), now: () => clock }),
  (ms) => {
    clock += ms;
  },
  () => ({ dataDir: temp.path() }),
);

windowCounterContract('embedded (SQLite), the store on the same clock', async (testClock) =>
  EmbeddedKvBackend.open({ dataDir: temp.path(), now: () => testClock.now }),
);

describe('embedded key-value store', () => {
  const opened: KvBackend[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((backend) => backend.close()));
  });
  const keep = <T extends KvBackend>(backend: T): T => {
    opened.push(backend);
    return backend;
  };
  const inspect = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return {
        journal: db.pragma('journal_mode', { simple: true }),
        rows: (db.prepare('SELECT count(*) AS n FROM kv').get() as { n: number }).n,
      };
    } finally {
      db.close();
    }
  };

  it('is <dataDir>/.anvil/kv.sqlite in WAL mode, opened by openKvBackend without a Redis URL', async () => {
    const backend = keep(openKvBackend({ dataDir: temp.path() }));
    await backend.namespace('localhost/dev/users').set('k', 'v');
    const file = join(temp.path(), '.anvil', 'kv.sqlite');
    expect(embeddedKvFile(temp.path())).toBe(file);
    expect(existsSync(file)).toBe(true);
    expect(inspect(file)).toEqual({ journal: 'wal', rows: 1 });
  });

  it('keeps its data across a reopen', async () => {
    const first = EmbeddedKvBackend.open({ dataDir: temp.path() });
    await first.namespace('a').set('k', 'v');
    await first.namespace('a').increment('c', 5, 60_000);
    await first.close();
    const again = keep(EmbeddedKvBackend.open({ dataDir: temp.path() })).namespace('a');
    expect(await again.get('k')).toBe('v');
    expect((await again.increment('c', 1, 60_000)).value).toBe(6);
  });

  it('sweeps expired rows every N writes, a bounded batch at a time', async () => {
    let now = 1_000_000;
    const backend = keep(
      EmbeddedKvBackend.open({ dataDir: temp.path(), now: () => now, sweepEvery: 10, sweepBatch: 5 }),
    );
    const kv = backend.namespace('a');
    for (let i = 0; i < 20; i++) await kv.set(`old${i}`, 'v', 100); // writes 1..20: sweeps at 10 and 20 find nothing expired
    now += 100;
    expect(await kv.get('old0')).toBeNull(); // expired: invisible, but still a row
    expect(inspect(backend.file).rows).toBe(20);
    for (let i = 0; i < 9; i++) await kv.increment(`new${i}`, 1, 60_000);
    expect(inspect(backend.file).rows).toBe(29);
    await kv.increment('new9', 1, 60_000); // the 30th write sweeps 5 expired rows
    expect(inspect(backend.file).rows).toBe(25);
    expect(backend.sweepExpired()).toBe(5);
    expect(backend.sweepExpired()).toBe(5);
    expect(backend.sweepExpired()).toBe(5);
    expect(backend.sweepExpired()).toBe(0);
    expect(inspect(backend.file).rows).toBe(10);
  });

  it('six threads opening a fresh file at once all count exactly', async () => {
    const perWorker = await raceIncrements(6, {
      options: { dataDir: temp.path() },
      ns: 'fresh',
      key: 'hits',
      count: 20,
      ttlMs: 60_000,
    });
    expect(perWorker.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(
      await keep(openKvBackend({ dataDir: temp.path() }))
        .namespace('fresh')
        .get('hits'),
    ).toBe('120');
  });

  it('a store from before the quota counts the rows it already holds when first opened', async () => {
    const file = embeddedKvFile(temp.path());
    keep(EmbeddedKvBackend.open({ dataDir: temp.path() }));
    // As an earlier version left it: rows, and no accounting.
    const db = new Database(file);
    db.exec(
      'DROP TRIGGER kv_usage_insert; DROP TRIGGER kv_usage_update; DROP TRIGGER kv_usage_delete; DROP TABLE kv_usage; PRAGMA user_version = 0',
    );
    db.prepare("INSERT INTO kv (ns, key, value) VALUES ('old', 'k', 'xxxxxxxx'), ('old', 'n', 12)").run();
    db.close();
    const kv = keep(EmbeddedKvBackend.open({ dataDir: temp.path() })).namespace('old', { maxBytes: 14 });
    await expect(kv.set('m', 'xx')).rejects.toMatchObject({
      code: 'ANVIL_ERR_QUOTA_KV_BYTES',
      message: expect.stringContaining('15 bytes, over its quota of 14 bytes'),
    });
    await kv.set('m', 'x');
  });

  it('validates its options', () => {
    expect(() => EmbeddedKvBackend.open({ dataDir: '' })).toThrow(/dataDir must be a non-empty path/);
    expect(() => EmbeddedKvBackend.open({ dataDir: temp.path(), sweepEvery: 0 })).toThrow(
      /sweepEvery must be an integer >= 1/,
    );
  });
});
