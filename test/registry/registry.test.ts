import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Registry, RegistryValidationError } from '../../src/deploy/registry/registry.js';
import { createReleaseIdGenerator, isReleaseId, newReleaseId } from '../../src/deploy/registry/release-id.js';
import { generatePublicHostKey } from '../../src/deploy/registry/public-host-key.js';

const HOST = 'localhost';
const KEY = 'k'.repeat(16);

let dir: string;
let file: string;
const open: Registry[] = [];

function openRegistry(options?: Parameters<typeof Registry.open>[1]): Registry {
  const r = Registry.open(file, options);
  open.push(r);
  return r;
}

/** A registry with the default hosts of a first boot. */
function seeded(options?: Parameters<typeof Registry.open>[1]): Registry {
  const r = openRegistry(options);
  r.addAdminHost('admin.localhost');
  r.addPublicHost({ name: HOST, key: KEY, env: 'dev' });
  return r;
}

function deploy(r: Registry, key: string, n: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = newReleaseId();
    r.recordRelease(HOST, key, id, `digest-${i}`);
    ids.push(id);
  }
  return ids;
}

function expectField(fn: () => unknown, field: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(RegistryValidationError);
  expect((caught as RegistryValidationError).field).toBe(field);
  expect((caught as Error).message).toContain(field);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'anvil-registry-'));
  file = join(dir, 'nested', 'deeper', 'registry.db');
});

afterEach(() => {
  for (const r of open.splice(0)) r.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('release ids', () => {
  it('have the documented format', () => {
    const gen = createReleaseIdGenerator();
    const id = gen(new Date('2026-11-22T09:08:07.006Z'));
    expect(id).toMatch(/^r-20261122-090807006-[0-9a-f]{4}$/);
    expect(isReleaseId(id)).toBe(true);
    expect(isReleaseId('r-20261122-5f3a9c')).toBe(false);
    expect(isReleaseId('../etc')).toBe(false);
    expect(isReleaseId(42)).toBe(false);
  });

  it('are unique and sort in creation order for 1000 ids made in a tight loop', () => {
    const ids = Array.from({ length: 1000 }, () => newReleaseId());
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every(isReleaseId)).toBe(true);
  });

  it('never go backwards when the clock does', () => {
    const gen = createReleaseIdGenerator();
    const t = new Date('2026-11-22T10:00:00.000Z');
    const a = gen(t);
    const b = gen(new Date(t.getTime() - 5000));
    const c = gen(t);
    expect([a, b, c].sort()).toEqual([a, b, c]);
    expect(b.slice(0, 20)).toBe('r-20261122-100000001');
    expect(c.slice(0, 20)).toBe('r-20261122-100000002');
  });

  it('public host keys are 32 random bytes in base64url', () => {
    const k = generatePublicHostKey();
    expect(k).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(k, 'base64url')).toHaveLength(32);
    expect(generatePublicHostKey()).not.toBe(k);
  });
});

describe('hosts', () => {
  it('creates parent dirs and the file', () => {
    openRegistry();
    expect(existsSync(file)).toBe(true);
  });

  it('adds, lists, gets and removes hosts; names are stored lower-case', () => {
    const r = openRegistry();
    r.addAdminHost('Admin.LocalHost');
    r.addPublicHost({ name: 'Shop.Example.com', key: KEY, env: 'pro', path: '/shop' });
    r.addPublicHost({ name: 'localhost', key: KEY, env: 'dev' });
    expect(r.listHosts()).toEqual([
      { name: 'admin.localhost', kind: 'admin' },
      { name: 'localhost', kind: 'public', key: KEY, env: 'dev', path: null },
      { name: 'shop.example.com', kind: 'public', key: KEY, env: 'pro', path: '/shop' },
    ]);
    expect(r.getHost('ADMIN.localhost')).toEqual({ name: 'admin.localhost', kind: 'admin' });
    expect(r.getHost('nope.localhost')).toBeNull();
    expect(r.getHost('bad host:8080')).toBeNull();

    expect(r.removeHost('SHOP.example.com')).toBe(true);
    expect(r.removeHost('shop.example.com')).toBe(false);
    expect(r.listHosts().map((h) => h.name)).toEqual(['admin.localhost', 'localhost']);
  });

  it('updates a public host', () => {
    const r = seeded();
    const key2 = generatePublicHostKey();
    r.updatePublicHost(HOST, { key: key2 });
    expect(r.getHost(HOST)).toEqual({ name: HOST, kind: 'public', key: key2, env: 'dev', path: null });
    r.updatePublicHost(HOST, { env: 'pro', path: '/users' });
    expect(r.getHost(HOST)).toEqual({ name: HOST, kind: 'public', key: key2, env: 'pro', path: '/users' });
    r.updatePublicHost(HOST, { path: null });
    expect(r.getHost(HOST)).toMatchObject({ env: 'pro', path: null });
    expectField(() => r.updatePublicHost('admin.localhost', { env: 'pro' }), 'name');
    expectField(() => r.updatePublicHost('unknown.localhost', { env: 'pro' }), 'name');
    expectField(() => r.updatePublicHost(HOST, { env: 'PRO' }), 'env');
    expect(r.getHost(HOST)).toMatchObject({ env: 'pro' });
  });

  it('rejects invalid values with an error naming the field', () => {
    const r = openRegistry();
    for (const name of [
      '',
      'bad_host',
      'has space',
      'host:8080',
      '-lead.example',
      'trail-.example',
      'a..b',
      `${'a'.repeat(64)}.com`,
      `${'a.'.repeat(127)}aa`,
    ]) {
      expectField(() => r.addAdminHost(name), 'name');
    }
    expectField(() => r.addPublicHost({ name: 'x.localhost', key: 'short', env: 'dev' }), 'key');
    expectField(() => r.addPublicHost({ name: 'x.localhost', key: `${KEY} x`, env: 'dev' }), 'key');
    expectField(() => r.addPublicHost({ name: 'x.localhost', key: KEY, env: 'Dev' }), 'env');
    expectField(() => r.addPublicHost({ name: 'x.localhost', key: KEY, env: '_dev' }), 'env');
    expectField(() => r.addPublicHost({ name: 'x.localhost', key: KEY, env: 'd'.repeat(33) }), 'env');
    for (const path of ['shop', '/', '/Shop', '/shop/x', '/anvil']) {
      expectField(() => r.addPublicHost({ name: 'x.localhost', key: KEY, env: 'dev', path }), 'path');
    }
    r.addAdminHost('admin.localhost');
    expectField(() => r.addPublicHost({ name: 'ADMIN.localhost', key: KEY, env: 'dev' }), 'name');
    expect(r.listHosts()).toEqual([{ name: 'admin.localhost', kind: 'admin' }]);
    r.addAdminHost(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`); // 253 chars
  });

  it('refuses to remove a public host that still has APIs', () => {
    const r = seeded();
    deploy(r, 'users', 1);
    expectField(() => r.removeHost(HOST), 'name');
    r.updateApi(HOST, 'users', { active: false, release: r.getApi(HOST, 'users')!.release, public: false });
    expect(r.deleteApi(HOST, 'users')).toMatchObject({ status: 'ok' });
    expect(r.removeHost(HOST)).toBe(true);
  });
});

describe('apis and releases', () => {
  it('first deploy: active true, public false, no earlier releases', () => {
    const r = seeded();
    const id = newReleaseId();
    const { record, pruned } = r.recordRelease(HOST, 'users', id, 'd1');
    expect(pruned).toEqual([]);
    expect(record).toEqual({
      key: 'users',
      release: id,
      active: true,
      public: false,
      releases: [],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: record.created_at,
    });
    expect(Object.keys(record)).toEqual(['key', 'release', 'active', 'public', 'releases', 'created_at', 'updated_at']);
    expect(r.getApi(HOST, 'users')).toEqual(record);
    expect(r.getApi('LOCALHOST', 'users')).toEqual(record);
    expect(r.getApi(HOST, 'nope')).toBeNull();
    expect(r.currentDigest(HOST, 'users')).toBe('d1');
    expect(r.currentDigest(HOST, 'nope')).toBeNull();
    expect(r.getRelease(HOST, 'users', id)).toEqual({
      host: HOST,
      key: 'users',
      release: id,
      digest: 'd1',
      created_at: record.created_at,
    });
    expect(r.getRelease(HOST, 'users', 'r-20000101-000000000-0000')).toBeNull();
  });

  it('redeploy keeps the flags and lists the previous release first', () => {
    let t = Date.parse('2026-11-22T10:00:00.000Z');
    const r = seeded({ now: () => new Date((t += 1000)) });
    const [a] = deploy(r, 'users', 1);
    const first = r.getApi(HOST, 'users')!;
    expect(r.updateApi(HOST, 'users', { active: true, release: a!, public: true })).toBe('ok');
    const b = newReleaseId();
    const { record } = r.recordRelease(HOST, 'users', b, 'd2');
    expect(record).toMatchObject({ release: b, active: true, public: true, releases: [a] });
    expect(record.created_at).toBe(first.created_at);
    expect(record.updated_at > first.updated_at).toBe(true);
    expect(r.currentDigest(HOST, 'users')).toBe('d2');

    // an inactive private API stays so
    expect(r.updateApi(HOST, 'users', { active: false, release: b, public: false })).toBe('ok');
    const c = newReleaseId();
    expect(r.recordRelease(HOST, 'users', c, 'd3').record).toMatchObject({
      release: c,
      active: false,
      public: false,
      releases: [b, a],
    });
  });

  it('9 deploys keep exactly 7 earlier releases; the 2 oldest are pruned by the 9th and 10th deploys', () => {
    const r = seeded();
    const ids = deploy(r, 'users', 8);
    expect(r.getApi(HOST, 'users')!.releases).toEqual(ids.slice(0, 7).reverse()); // current + 7 earlier
    const pruned: string[] = [];
    for (const n of [9, 10]) {
      const id = newReleaseId();
      const res = r.recordRelease(HOST, 'users', id, `d${n}`);
      ids.push(id);
      pruned.push(...res.pruned);
      expect(res.record.release).toBe(id);
      expect(res.record.releases).toHaveLength(7);
      expect(res.record.releases).toEqual(ids.slice(-8, -1).reverse());
    }
    expect(pruned).toEqual([ids[0], ids[1]]);
    expect(r.getRelease(HOST, 'users', ids[0]!)).toBeNull();
    expect(r.getRelease(HOST, 'users', ids[1]!)).toBeNull();
    expect(r.listReleases(HOST, 'users')).toHaveLength(8);
  });

  it('pruning returns several releases at once, oldest first, with a smaller keep', () => {
    const r = seeded({ keep: 7 });
    const ids = deploy(r, 'users', 9);
    r.close();
    const small = openRegistry({ keep: 5 });
    const next = newReleaseId();
    const { record, pruned } = small.recordRelease(HOST, 'users', next, 'x');
    // 9 stored (ids[0] went at the 9th deploy), current + 5 kept: the 3 oldest go
    expect(pruned).toEqual([ids[1], ids[2], ids[3]]);
    expect(record.releases).toEqual(ids.slice(4).reverse());
  });

  it('rollback to an earlier release, and unknown api / release are reported', () => {
    const r = seeded();
    const [a, b, c] = deploy(r, 'users', 3);
    expect(r.updateApi(HOST, 'users', { active: true, release: a!, public: true })).toBe('ok');
    expect(r.getApi(HOST, 'users')).toMatchObject({ release: a, active: true, public: true, releases: [c, b] });
    expect(r.currentDigest(HOST, 'users')).toBe('digest-0');
    expect(r.updateApi(HOST, 'users', { active: true, release: 'r-20000101-000000000-0000', public: true })).toBe(
      'unknown-release',
    );
    expect(r.updateApi(HOST, 'nope', { active: true, release: a!, public: true })).toBe('unknown-api');
    expect(r.updateApi('other.localhost', 'users', { active: true, release: a!, public: true })).toBe('unknown-api');
    expect(r.getApi(HOST, 'users')).toMatchObject({ release: a, releases: [c, b] });
  });

  it('switching back and forth keeps the set consistent', () => {
    const r = seeded();
    const ids = deploy(r, 'users', 8); // current + 7 earlier: full
    const all = new Set(ids);
    const check = () => {
      const rec = r.getApi(HOST, 'users')!;
      expect(rec.releases).not.toContain(rec.release);
      expect(new Set([rec.release, ...rec.releases])).toEqual(all);
      // newest first, by age
      expect(rec.releases).toEqual(ids.filter((x) => x !== rec.release).reverse());
      expect(r.listReleases(HOST, 'users').map((x) => x.release)).toEqual([...ids].reverse());
    };
    for (const target of [ids[0], ids[7], ids[3], ids[0], ids[6], ids[7]]) {
      expect(r.updateApi(HOST, 'users', { active: true, release: target!, public: false })).toBe('ok');
      expect(r.getApi(HOST, 'users')!.release).toBe(target);
      check();
    }
    // pruning is by age: rolled back to the oldest, a new deploy prunes that oldest one once it is no longer current
    expect(r.updateApi(HOST, 'users', { active: true, release: ids[0]!, public: false })).toBe('ok');
    const next = newReleaseId();
    const { record, pruned } = r.recordRelease(HOST, 'users', next, 'dn');
    expect(pruned).toEqual([ids[0]]);
    expect(record.releases).toEqual(ids.slice(1).reverse());
  });

  it('lowering keep prunes on the next switch', () => {
    seeded();
    const big = open[0]!;
    const ids = deploy(big, 'users', 5);
    big.close();
    const small = openRegistry({ keep: 2 });
    expect(small.updateApi(HOST, 'users', { active: true, release: ids[4]!, public: false })).toBe('ok');
    expect(small.getApi(HOST, 'users')!.releases).toEqual([ids[3], ids[2]]);
  });

  it('deleteApi refuses while active and works when inactive', () => {
    const r = seeded();
    const ids = deploy(r, 'users', 3);
    deploy(r, 'orders', 1);
    expect(r.deleteApi(HOST, 'users')).toEqual({ status: 'active' });
    expect(r.deleteApi(HOST, 'nope')).toEqual({ status: 'unknown-api' });
    expect(r.updateApi(HOST, 'users', { active: false, release: ids[1]!, public: false })).toBe('ok');
    expect(r.deleteApi(HOST, 'users')).toEqual({ status: 'ok', releases: [ids[1], ids[2], ids[0]] });
    expect(r.getApi(HOST, 'users')).toBeNull();
    expect(r.getRelease(HOST, 'users', ids[0]!)).toBeNull();
    expect(r.listApiKeys(HOST)).toEqual(['orders']);
    // the key can be deployed again from scratch
    const again = newReleaseId();
    expect(r.recordRelease(HOST, 'users', again, 'x').record).toMatchObject({
      release: again,
      active: true,
      public: false,
      releases: [],
    });
  });

  it('lists keys sorted and every API of every host', () => {
    const r = seeded();
    r.addPublicHost({ name: 'shop.localhost', key: KEY, env: 'pro' });
    deploy(r, 'zeta', 1);
    deploy(r, 'alpha', 2);
    r.recordRelease('shop.localhost', 'cart', newReleaseId(), 'c');
    expect(r.listApiKeys(HOST)).toEqual(['alpha', 'zeta']);
    expect(r.listApiKeys('shop.localhost')).toEqual(['cart']);
    expect(r.listApiKeys('unknown')).toEqual([]);
    const all = r.listApis();
    expect(all.map((a) => `${a.host}/${a.key}`)).toEqual(['localhost/alpha', 'localhost/zeta', 'shop.localhost/cart']);
    expect(all[0]).toEqual({ host: HOST, ...r.getApi(HOST, 'alpha')! });
  });

  it('recordRelease validates its arguments', () => {
    const r = seeded();
    expectField(() => r.recordRelease('admin.localhost', 'users', newReleaseId(), 'd'), 'host');
    expectField(() => r.recordRelease('unknown.localhost', 'users', newReleaseId(), 'd'), 'host');
    expectField(() => r.recordRelease(HOST, 'Users', newReleaseId(), 'd'), 'key');
    expectField(() => r.recordRelease(HOST, 'anvil', newReleaseId(), 'd'), 'key');
    expectField(() => r.recordRelease(HOST, 'users', '../x', 'd'), 'release');
    expectField(() => r.recordRelease(HOST, 'users', newReleaseId(), ''), 'digest');
    const id = newReleaseId();
    r.recordRelease(HOST, 'users', id, 'd');
    expectField(() => r.recordRelease(HOST, 'users', id, 'd'), 'release');
    expect(r.getApi(HOST, 'users')).toMatchObject({ release: id, releases: [] });
    expect(r.listApis()).toHaveLength(1);
  });
});

describe('persistence and other connections', () => {
  it('dataVersion changes after a write from a second Registry on the same file', () => {
    const router = seeded();
    const v0 = router.dataVersion();
    expect(router.dataVersion()).toBe(v0); // no write, no change
    const cli = openRegistry();
    cli.recordRelease(HOST, 'users', newReleaseId(), 'd');
    const v1 = router.dataVersion();
    expect(v1).not.toBe(v0);
    expect(router.getApi(HOST, 'users')).not.toBeNull();
    cli.addAdminHost('ops.localhost');
    expect(router.dataVersion()).not.toBe(v1);
    expect(router.getHost('ops.localhost')).toEqual({ name: 'ops.localhost', kind: 'admin' });
  });

  it('everything survives close() and reopen', () => {
    const r = seeded();
    r.addPublicHost({ name: 'shop.localhost', key: KEY, env: 'pro', path: '/cart' });
    const ids = deploy(r, 'users', 3);
    r.updateApi(HOST, 'users', { active: true, release: ids[1]!, public: true });
    const hosts = r.listHosts();
    const apis = r.listApis();
    const rel = r.getRelease(HOST, 'users', ids[0]!);
    r.close();
    r.close(); // idempotent

    const again = openRegistry();
    expect(again.listHosts()).toEqual(hosts);
    expect(again.listApis()).toEqual(apis);
    expect(again.getRelease(HOST, 'users', ids[0]!)).toEqual(rel);
    expect(again.currentDigest(HOST, 'users')).toBe('digest-1');
    // and keeps working: earlier releases stay ordered by age, newest first
    const next = newReleaseId();
    expect(again.recordRelease(HOST, 'users', next, 'x').record).toMatchObject({
      active: true,
      public: true,
      releases: [ids[2], ids[1], ids[0]],
    });
  });

  it('opening twice is idempotent and a newer schema is refused', async () => {
    openRegistry().close();
    openRegistry().close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file);
    db.pragma('user_version = 99');
    db.close();
    expect(() => Registry.open(file)).toThrow(/schema version 99/);
  });
});
