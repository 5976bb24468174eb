import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';
import { waitFor } from '../helpers/wait-for.js';

// Issue 26: every management action is recorded (who by key fingerprint, from where, what, with
// which result) in the data dir's audit log, shown by GET /anvil/audit and logged as pino lines.

const FINGERPRINT = createHash('sha256').update(TEST_KEY).digest('hex').slice(0, 12);

function api(key: string, variant: string): string {
  return `key: ${key}\nendpoints:\n  get /variant:\n    Reply: { directive: ModifyMessage, body: { variant: ${variant} } }\n`;
}

async function deploy(on: TestInstance, yaml: string, headers: Record<string, string> = {}) {
  return on.admin('/anvil/api', {
    method: 'POST',
    body: tarGz({ 'api.yaml': yaml }),
    headers: { 'content-type': 'application/gzip', ...headers },
  });
}

function put(on: TestInstance, key: string, change: object) {
  return on.admin(`/anvil/api/${key}`, {
    method: 'PUT',
    body: JSON.stringify(change),
    headers: { 'content-type': 'application/json' },
  });
}

async function audit(
  on: TestInstance,
  query = '',
): Promise<{ entries: Array<Record<string, any>>; next: number | null }> {
  const reply = await on.admin(`/anvil/audit${query}`);
  expect(reply.status, reply.text).toBe(200);
  return reply.json();
}

/** The bytes of the audit store on disk (the database and its write-ahead log). */
function auditFileBytes(on: TestInstance): string {
  const base = join(on.dataDir, '.anvil', 'audit.sqlite');
  return [base, `${base}-wal`]
    .filter((f) => existsSync(f))
    .map((f) => readFileSync(f).toString('latin1'))
    .join('');
}

let anvil: TestInstance;
let first: string;
let second: string;

beforeAll(async () => {
  anvil = await startInstance();
  first = (await deploy(anvil, api('audited', 'one'))).json().release;
  second = (await deploy(anvil, api('audited', 'two'))).json().release;
  expect((await put(anvil, 'audited', { active: true, public: true, release: second })).status).toBe(204);
  expect((await put(anvil, 'audited', { active: true, public: true, release: first })).status).toBe(204);
  expect((await anvil.request('/audited/variant')).json()).toEqual({ variant: 'one' });
  expect((await anvil.admin('/anvil/api/audited', { method: 'DELETE' })).status).toBe(409);
  expect((await put(anvil, 'audited', { active: false, public: false, release: first })).status).toBe(204);
  expect((await anvil.admin('/anvil/api/audited', { method: 'DELETE' })).status).toBe(204);
});
afterAll(async () => anvil?.dispose());

describe('the audit log of management actions', () => {
  it('records deploy, publish, rollback, disable and delete, newest first, with the caller and a fingerprint of the key', async () => {
    const { entries } = await audit(anvil, '?api=audited');
    expect(entries.map((e) => [e.action, e.result, e.status, e.release])).toEqual([
      ['delete', 'ok', 204, first],
      ['disable', 'ok', 204, first],
      ['delete', 'error', 409, first],
      ['rollback', 'ok', 204, first],
      ['publish', 'ok', 204, second],
      ['deploy', 'ok', 201, second],
      ['deploy', 'ok', 201, first],
    ]);
    for (const entry of entries) {
      expect(entry).toMatchObject({
        host: 'localhost',
        api: 'audited',
        address: '127.0.0.1',
        keyFingerprint: FINGERPRINT,
        origin: 'http',
      });
      expect(Date.parse(entry.time)).toBeGreaterThan(Date.now() - 120_000);
    }
    expect(entries[2]!.error).toMatch(/is active: disable it first/);
    expect(entries[3]!.detail).toEqual({ active: true, public: true, release: first, previousRelease: second });
  });

  it('records failed actions with their status and message', async () => {
    const broken = await deploy(
      anvil,
      'key: broken\nendpoints:\n  get /x:\n    Nope: { directive: NoSuchDirective }\n',
    );
    expect(broken.status).toBe(400);
    const unknownRelease = await put(anvil, 'nothing-here', {
      active: true,
      public: true,
      release: 'r-20200101-000000000-abcd',
    });
    expect(unknownRelease.status).toBe(404);
    const badBody = await anvil.admin('/anvil/api/nothing-here', { method: 'PUT', body: '{not json' });
    expect(badBody.status).toBe(400);

    const { entries } = await audit(anvil, '?limit=3');
    expect(entries.map((e) => [e.action, e.result, e.status, e.api])).toEqual([
      ['update', 'error', 400, 'nothing-here'],
      ['update', 'error', 404, 'nothing-here'],
      ['deploy', 'error', 400, null],
    ]);
    expect(entries[0]!.error).toBe('body is not valid JSON');
    expect(entries[1]!.error).toBe('unknown API "nothing-here"');
    expect(entries[2]!.error).toMatch(/NoSuchDirective/);
  });

  it('pages with limit and the before cursor, and filters by API and action', async () => {
    const all = await audit(anvil, '?limit=500');
    const pages: number[][] = [];
    let before: number | null = null;
    do {
      const page: { entries: Array<Record<string, any>>; next: number | null } = await audit(
        anvil,
        `?limit=4${before === null ? '' : `&before=${before}`}`,
      );
      pages.push(page.entries.map((e) => e.id));
      before = page.next;
    } while (before !== null);
    expect(pages.slice(0, -1).every((p) => p.length === 4)).toBe(true);
    expect(pages.flat()).toEqual(all.entries.map((e) => e.id));
    expect(all.entries.map((e) => e.id)).toEqual([...all.entries.map((e) => e.id)].sort((a, b) => b - a));

    const deploys = await audit(anvil, '?action=deploy&api=audited');
    expect(deploys.entries.map((e) => e.release)).toEqual([second, first]);
    expect((await audit(anvil, '?action=rollback')).entries).toHaveLength(1);
    expect((await audit(anvil, '?api=no-such-api')).entries).toEqual([]);
  });

  it('refuses a bad query, naming the parameter', async () => {
    for (const [query, words] of [
      ['?limit=0', 'limit'],
      ['?limit=9999', 'limit'],
      ['?before=x', 'before'],
      ['?action=explode', 'action'],
      ['?api=Bad_Key', 'api'],
      ['?sort=asc', 'unknown parameter "sort"'],
    ] as const) {
      const reply = await anvil.admin(`/anvil/audit${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.json().error).toContain(words);
    }
  });

  it('answers only with the admin credentials', async () => {
    expect((await anvil.request('/anvil/audit', { host: 'admin.localhost' })).status).toBe(401);
    expect(
      (
        await anvil.request('/anvil/audit', {
          host: 'admin.localhost',
          headers: { 'public-host': 'localhost', 'public-host-key': 'wrong' },
        })
      ).status,
    ).toBe(401);
    expect((await anvil.request('/anvil/audit')).status).toBe(404);
  });

  it('writes each entry as a pino line, and the key itself nowhere', async () => {
    const lines = await waitFor(
      () => {
        const found = anvil.logLines().filter((l) => l.audit !== undefined && l.audit.api === 'audited');
        return found.length >= 7 ? found : null;
      },
      { what: 'the audit lines of the instance log' },
    );
    expect(lines.map((l) => l.audit.action)).toEqual([
      'deploy',
      'deploy',
      'publish',
      'rollback',
      'delete',
      'disable',
      'delete',
    ]);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'audit: deploy ok',
      audit: { keyFingerprint: FINGERPRINT, address: '127.0.0.1', host: 'localhost' },
    });
    expect(lines[4]).toMatchObject({ level: 40, msg: 'audit: delete failed (409)' });
    expect(anvil.output()).not.toContain(TEST_KEY);
    expect(auditFileBytes(anvil)).toContain(FINGERPRINT);
    expect(auditFileBytes(anvil)).not.toContain(TEST_KEY);
  });

  it('records host changes made with the CLI, and the running instance logs them', async () => {
    const added = anvilCli(['hosts', 'add-admin', 'ops.localhost', '--data', anvil.dataDir]);
    expect(added.status, added.stderr).toBe(0);
    const refused = anvilCli(['hosts', 'remove', 'nowhere.localhost', '--data', anvil.dataDir]);
    expect(refused.status).toBe(1);

    // An admin host serves every public host: its entry is instance-wide, shown to every host.
    const { entries } = await audit(anvil, '?action=host-add');
    expect(entries[0]).toMatchObject({
      action: 'host-add',
      host: null,
      result: 'ok',
      origin: 'cli',
      address: null,
      keyFingerprint: null,
      detail: { kind: 'admin', name: 'ops.localhost' },
    });
    const logged = await waitFor(
      () => {
        const found = anvil.logLines().filter((l) => l.audit?.origin === 'cli');
        return found.length >= 2 ? found : null;
      },
      { what: 'the CLI actions in the instance log' },
    );
    expect(logged.map((l) => [l.audit.action, l.audit.result])).toEqual([
      ['host-add', 'ok'],
      ['host-remove', 'error'],
    ]);
    expect(logged[1]!.audit.error).toContain('no host named "nowhere.localhost"');
  });

  it('records a job action of the CLI for its host and API', async () => {
    const flushed = anvilCli([
      'jobs',
      'flush',
      '--api',
      'gone',
      '--host',
      'localhost',
      '--data',
      anvil.dataDir,
      '--json',
    ]);
    expect(flushed.status, flushed.stderr).toBe(0);
    const { entries } = await audit(anvil, '?action=jobs-flush');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      host: 'localhost',
      api: 'gone',
      result: 'ok',
      origin: 'cli',
      detail: { removed: JSON.parse(flushed.stdout).removed },
    });
    expect(typeof entries[0]!.detail.user).toBe('string');
  });
});

describe('audit retention', () => {
  it('keeps the newest --audit-rows entries (and behind a trusted proxy records the client it names)', async () => {
    const small = await startInstance({ args: ['--audit-rows', '3', '--trusted-proxy', '127.0.0.1'] });
    try {
      for (const variant of ['a', 'b', 'c', 'd', 'e'])
        expect((await deploy(small, api('kept', variant), { 'x-forwarded-for': '203.0.113.9' })).status).toBe(201);
      const { entries, next } = await audit(small);
      expect(entries).toHaveLength(3);
      expect(next).toBeNull();
      const releases = (await small.admin('/anvil/api/kept')).json();
      expect(entries[0]!.release).toBe(releases.release);
      expect(entries.map((e) => e.address)).toEqual(['203.0.113.9', '203.0.113.9', '203.0.113.9']);
    } finally {
      await small.dispose();
    }
  });

  it("keeps --audit-rows per host: a flood of failed actions from one host leaves another host's entries", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'anvil-data-'));
    const otherKey = 'other-host-key-0123456789';
    expect(
      anvilCli(['hosts', 'add-public', 'other.localhost', '--env', 'dev', '--key', otherKey, '--data', dataDir]).status,
    ).toBe(0);
    expect(anvilCli(['hosts', 'add-admin', 'ops.localhost', '--data', dataDir]).status).toBe(0);
    const small = await startInstance({ dataDir, args: ['--audit-rows', '20'] });
    try {
      const other = { 'public-host': 'other.localhost', 'public-host-key': otherKey };
      const deployed = await small.request('/anvil/api', {
        host: 'admin.localhost',
        method: 'POST',
        body: tarGz({ 'api.yaml': api('neighbour', 'one') }),
        headers: { ...other, 'content-type': 'application/gzip' },
      });
      expect(deployed.status).toBe(201);
      const published = await small.request('/anvil/api/neighbour', {
        host: 'admin.localhost',
        method: 'PUT',
        body: JSON.stringify({ active: true, public: true, release: deployed.json().release }),
        headers: other,
      });
      expect(published.status).toBe(204);

      // The default host fails 60 PUTs: three times its rows.
      for (let i = 0; i < 60; i++)
        expect(
          (await put(small, `nothing-${i}`, { active: true, public: true, release: 'r-20200101-000000000-abcd' }))
            .status,
        ).toBe(404);

      const listed = await small.request('/anvil/audit?limit=500', { host: 'admin.localhost', headers: other });
      expect(listed.status).toBe(200);
      expect(listed.json().entries.map((e: Record<string, any>) => [e.action, e.host])).toEqual([
        ['publish', 'other.localhost'],
        ['deploy', 'other.localhost'],
        ['host-add', null],
        ['host-add', 'other.localhost'],
      ]);
      const flooder = (await audit(small, '?limit=500')).entries;
      expect(flooder.filter((e) => e.host === 'localhost')).toHaveLength(20);
      expect(flooder[0]).toMatchObject({ action: 'update', api: 'nothing-59', status: 404 });
    } finally {
      await small.dispose();
    }
  });

  it('refuses a bad retention flag at start, naming it', () => {
    const result = anvilCli(['start', '--audit-days', '0', '--data', '/nonexistent-anvil-data']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('--audit-days');
  });
});
