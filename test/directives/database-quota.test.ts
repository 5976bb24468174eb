import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import type { Reply } from '../helpers/instance.js';

// Issue 41, case 3: an API's SQLite database has a disk quota (limits.databaseKb, at most
// --max-database-bytes), its file and write-ahead log together: the file holds at most half of it
// in pages, the log of one transaction at most as much again, and between writes the log is kept
// under a sixteenth of the quota. Over it: 507, a message naming the limit (shown to clients, debug
// or not, as every quota's), nothing written. In-process (helpers/in-process-apis.ts): the instance's
// --max-database-bytes as the harness's quota, its refusals counted from the actor's tally.

const MIB = 1024 * 1024;
const CEILING = 8 * MIB;

/** One request writing 200 × 1 MiB, as the issue ran it (built-in directives only). */
const HOG_SQL =
  'insert into t with recursive c(x) as (select 1 union all select x+1 from c limit 200) select randomblob(1048576) from c';

const api = (key: string, limits: string) => ({
  'api.yaml': `key: ${key}
${limits}
before:
  Connect: { directive: DatabaseConnect }
endpoints:
  post /hog:
    Insert: { directive: DatabaseQuery, sql: "${HOG_SQL}", mode: run }
    Reply: { directive: ModifyMessage, status: 201, body: { stored: true } }
  post /row/{kib}:
    Insert: { directive: DatabaseQuery, sql: "insert into t (b) values (randomblob(? * 1024))", params: [$.message.pathParam.kib], mode: run }
    Reply: { directive: ModifyMessage, status: 201, body: { stored: true } }
  post /hog-custom:
    Insert: { directive: HogCustom }
  delete /row:
    Delete: { directive: DatabaseQuery, sql: "delete from t where rowid = (select max(rowid) from t)", mode: run }
    Reply: { directive: ModifyMessage, body: { deleted: true } }
  get /rows:
    Count: { directive: DatabaseQuery, sql: "select count(*) as n from t", target: count, mode: get }
    Reply: { directive: ModifyMessage, body: $.memory.count }
`,
  'Assets/db/001.sql': 'CREATE TABLE t (b BLOB);\n',
  'Directives/HogCustom.js': `export default (state) => {
  state.db.run(${JSON.stringify(HOG_SQL)});
  state.message.body = { stored: true };
};
`,
});

let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({
    apis: {
      // No limits: the instance's ceiling.
      hog: api('hog', ''),
      tight: api('tight', 'limits: { databaseKb: 4096 }'),
      greedy: api('greedy', 'limits: { databaseKb: 1048576 }'),
      // 8 MiB: its log's slack is 512 KiB.
      pinned: api('pinned', 'limits: { databaseKb: 8192 }'),
      neighbour: api('neighbour', ''),
    },
    quotas: { databaseBytes: CEILING }, // --max-database-bytes 8MiB
  });
}, 60_000);
afterAll(async () => anvil?.dispose());

const post = (path: string): Promise<Reply> => anvil.request(path, { method: 'POST' });
const rows = async (key: string): Promise<number> => (await anvil.request(`/${key}/rows`)).json().n;
const size = (path: string): number => statSync(path, { throwIfNoEntry: false })?.size ?? 0;
const databaseFile = (key: string): string => join(anvil.dataDir, 'localhost/dev', key, 'db.sqlite');
/** The database file and its write-ahead log, bytes on disk. */
function databaseBytes(key: string): { file: number; log: number } {
  const file = databaseFile(key);
  return { file: size(file), log: size(`${file}-wal`) };
}
/** What the quota allows on disk: itself, the log's slack (a sixteenth) and the log's frame headers (24 bytes a 4 KiB page). */
const allowed = (quota: number) => quota + quota / 16 + Math.ceil(quota / 2 / 4096) * 24 + 32;
const message = (quota: number) =>
  `this write would make the API's database file larger than ${quota / 2} bytes (${quota / 2 / 4096} pages), half its disk quota of ${quota} bytes; the other half is room for its write-ahead log (api.yaml limits.databaseKb, at most --max-database-bytes); nothing was written`;

describe('the database quota (limits.databaseKb, --max-database-bytes)', () => {
  it("stops the issue's one-request insert of 200 MiB: 507, a message naming the limit, nothing written, file and log under the quota", async () => {
    const reply = await post('/hog/hog');
    expect(reply.status).toBe(507);
    expect(reply.json().error).toBe(message(CEILING));
    expect(await rows('hog')).toBe(0);
    const { file, log } = databaseBytes('hog');
    expect(file).toBeLessThanOrEqual(CEILING / 2);
    expect(file + log).toBeLessThanOrEqual(allowed(CEILING));
    expect(anvil.quotaRefusals('hog', 'database_bytes')).toBeGreaterThanOrEqual(1);
    // Again and again: the same refusal, and the disk taken does not grow.
    for (let i = 0; i < 3; i++) expect((await post('/hog/hog')).status).toBe(507);
    const after = databaseBytes('hog');
    expect(after.file + after.log).toBeLessThanOrEqual(allowed(CEILING));
    // Writes that fit still pass.
    expect((await post('/hog/row/64')).status).toBe(201);
    expect(await rows('hog')).toBe(1);
  }, 60_000);

  it('admits rows until the file holds half the quota, then refuses; a delete makes room again', async () => {
    const quota = 4 * MIB;
    let stored = 0;
    let refused: Reply | null = null;
    for (let i = 0; i < 20 && refused === null; i++) {
      const reply = await post('/tight/row/256');
      if (reply.status === 201) stored++;
      else refused = reply;
    }
    expect(refused?.status).toBe(507);
    expect(refused?.json().error).toBe(message(quota));
    // 2 MiB of pages hold seven rows of 256 KiB with their overflow pages and the tables.
    expect(stored).toBeGreaterThanOrEqual(6);
    expect(await rows('tight')).toBe(stored);
    const { file, log } = databaseBytes('tight');
    expect(file).toBeLessThanOrEqual(quota / 2);
    expect(file + log).toBeLessThanOrEqual(allowed(quota));
    expect((await anvil.request('/tight/row', { method: 'DELETE' })).status).toBe(200);
    expect((await post('/tight/row/256')).status).toBe(201);
    expect(await rows('tight')).toBe(stored);
  }, 60_000);

  it('is capped by the instance: an API asking for more gets --max-database-bytes', async () => {
    const reply = await post('/greedy/hog');
    expect(reply.status).toBe(507);
    expect(reply.json().error).toBe(message(CEILING));
  }, 60_000);

  it("holds a custom directive's state.db.run to the same quota, with the same message (not debug: shown as a quota's)", async () => {
    const before = anvil.quotaRefusals('greedy', 'database_bytes');
    const reply = await post('/greedy/hog-custom');
    expect(reply.status).toBe(507);
    expect(reply.json().error).toBe(message(CEILING));
    expect(anvil.quotaRefusals('greedy', 'database_bytes')).toBeGreaterThan(before);
    expect(await rows('greedy')).toBe(0);
    const { file, log } = databaseBytes('greedy');
    expect(file + log).toBeLessThanOrEqual(allowed(CEILING));
  }, 60_000);

  it('refuses writes while a read it cannot end pins a log over its slack, and writes again once it ends', async () => {
    const quota = 8 * MIB;
    expect((await post('/pinned/row/1')).status).toBe(201);
    // Another reader of the file (an operator's backup, say) holds a read transaction: no checkpoint
    // can empty the log past it, so commits would pile up in it.
    const reader = new Database(databaseFile('pinned'), { readonly: true });
    try {
      reader.exec('BEGIN');
      reader.prepare('select count(*) from t').get();
      let refused: Reply | null = null;
      for (let i = 0; i < 40 && refused === null; i++) {
        const reply = await post('/pinned/row/256');
        if (reply.status !== 201) refused = reply;
      }
      expect(refused?.status).toBe(507);
      expect(refused?.json().error).toMatch(
        /^the API's database write-ahead log is \d+ bytes and cannot be emptied while another of its statements uses the database; writes wait for that under its disk quota of 8388608 bytes \(api\.yaml limits\.databaseKb, at most --max-database-bytes\); retry$/,
      );
      const { file, log } = databaseBytes('pinned');
      expect(file + log).toBeLessThanOrEqual(allowed(quota));
      expect((await post('/pinned/row/1')).status).toBe(507);
    } finally {
      reader.exec('COMMIT');
      reader.close();
    }
    expect((await post('/pinned/row/1')).status).toBe(201);
    expect(databaseBytes('pinned').log).toBeLessThanOrEqual(quota / 16);
  }, 60_000);

  it('costs that API alone: a neighbour on the same instance writes as before', async () => {
    expect((await post('/neighbour/row/1024')).status).toBe(201);
    expect(await rows('neighbour')).toBe(1);
  });
});
