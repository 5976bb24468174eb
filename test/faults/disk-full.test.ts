import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';
import { waitFor } from '../helpers/wait-for.js';

// The data directory on a small file system that fills up: writes fail with a clear error, reads
// keep working, nothing stored is corrupted, and writes work again once space is freed. It needs
// root to mount a tmpfs (CI runs as root); elsewhere it is skipped, saying so.

const API = {
  'api.yaml': `key: full
before:
  Connect: { directive: DatabaseConnect }
endpoints:
  post /rows:
    Insert: { directive: DatabaseQuery, sql: "INSERT INTO rows (data) VALUES (?)", params: [$.message.body.data], mode: run }
    Reply: { directive: ModifyMessage, status: 201, body: { stored: true } }
  post /later:
    Queue: { directive: ForTheWorker, identifier: true }
    Insert: { directive: DatabaseQuery, sql: "INSERT INTO rows (data) VALUES ('job')", mode: run }
  get /rows:
    Count: { directive: DatabaseQuery, sql: "SELECT count(*) AS n FROM rows", target: count, mode: get }
    Reply: { directive: ModifyMessage, body: $.memory.count }
after:
  Log: { directive: Log, groups: [AFTER_FLOW] }
`,
  'Assets/db/001.sql': 'CREATE TABLE rows (id INTEGER PRIMARY KEY, data TEXT NOT NULL);\n',
};

const isRoot = process.getuid?.() === 0;
if (!isRoot)
  console.warn('test/faults/disk-full.test.ts is skipped: mounting a small tmpfs needs root (CI runs as root)');

/** Fills the file system with one file until it refuses (ENOSPC); returns its path. */
function fill(dir: string): string {
  const file = join(dir, 'filler');
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return file;
}

describe.skipIf(!isRoot)('the data directory fills up', () => {
  const mountPoint = mkdtempSync(join(tmpdir(), 'anvil-full-'));
  let anvil: TestInstance;

  beforeAll(async () => {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mountPoint], { encoding: 'utf8' });
    if (mounted.status !== 0) throw new Error(`cannot mount a tmpfs at ${mountPoint}: ${mounted.stderr}`);
    anvil = await startInstance({ apis: { full: API }, dataDir: join(mountPoint, 'data'), args: ['--cells', '1'] });
  });
  afterAll(async () => {
    await anvil?.stop();
    spawnSync('umount', ['-l', mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  const post = (data: string) =>
    anvil.request('/full/rows', {
      method: 'POST',
      body: JSON.stringify({ data }),
      headers: { 'content-type': 'application/json' },
    });

  it('refuses writes with 507 and a message, keeps reads and stored rows, and recovers when space is freed', async () => {
    for (let i = 0; i < 5; i++) expect((await post(`row ${i}`)).status).toBe(201);
    const filler = fill(mountPoint);

    const refused = await post('x'.repeat(256 * 1024));
    expect(refused.status).toBe(507);
    expect(refused.json().error).toBe('Insufficient Storage');
    const read = await anvil.request('/full/rows');
    expect(read.status).toBe(200);
    expect(read.json()).toEqual({ n: 5 });
    expect(anvil.child.exitCode).toBeNull();

    await waitFor(() => anvil.output().includes('the disk is full, nothing was written'), {
      what: 'the disk-full error in the log',
    });

    // A deploy has nowhere to unpack: refused with a status that says so, the current release stays.
    const deploy = await anvil.admin('/anvil/api', {
      method: 'POST',
      body: tarGz({
        'api.yaml': API['api.yaml'].replace('key: full', 'key: other'),
        'Assets/big.txt': 'y'.repeat(512 * 1024),
      }),
      headers: { 'content-type': 'application/gzip' },
    });
    expect([503, 507], deploy.text).toContain(deploy.status);
    // A job cannot be queued: refused, not half-accepted.
    const job = await anvil.request('/full/later', {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect([503, 507], job.text).toContain(job.status);
    expect((await anvil.request('/full/rows')).status).toBe(200);
    expect(anvil.child.exitCode).toBeNull();

    rmSync(filler);
    expect((await post('after')).status).toBe(201);
    expect((await anvil.request('/full/rows')).json()).toEqual({ n: 6 });

    await anvil.stop();
    const db = new Database(join(mountPoint, 'data', 'localhost', 'dev', 'full', 'db.sqlite'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('SELECT count(*) FROM rows').pluck().get()).toBe(6);
    } finally {
      db.close();
    }
  });
});
