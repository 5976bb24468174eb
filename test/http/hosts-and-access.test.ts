import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { eventually, startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';

const VERSION_1 = `key: shop
endpoints:
  get /version:
    Reply: { directive: ModifyMessage, body: { version: 1 } }
`;
const VERSION_2 = VERSION_1.replace('version: 1', 'version: 2');
const VERSION_3 = VERSION_1.replace('version: 1', 'version: 3');

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis: { ping: { 'api.yaml': 'key: ping\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' } },
  });
});
afterAll(async () => anvil?.dispose());

function deploy(yaml: string) {
  return anvil.admin('/anvil/api', {
    method: 'POST',
    body: tarGz({ 'api.yaml': yaml }),
    headers: { 'content-type': 'application/gzip' },
  });
}

function put(key: string, body: unknown) {
  return anvil.admin(`/anvil/api/${key}`, {
    method: 'PUT',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
}

describe('virtual hosts', () => {
  it('answers 404 for an unknown host', async () => {
    const reply = await anvil.request('/ping/ping', { host: 'elsewhere.example' });
    expect(reply.status).toBe(404);
  });

  it('ignores the port in Host', async () => {
    const reply = await anvil.request('/ping/ping', { host: `localhost:${anvil.port}` });
    expect(reply.json()).toEqual({ message: 'pong' });
  });

  it('serves /anvil/health on the admin host without credentials', async () => {
    const reply = await anvil.request('/anvil/health', { host: 'admin.localhost' });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ status: 'ok' });
  });
});

describe('admin credentials', () => {
  const cases: Array<[string, Record<string, string>]> = [
    ['no headers', {}],
    ['no key', { 'public-host': 'localhost' }],
    ['no host', { 'public-host-key': TEST_KEY }],
    ['a wrong key', { 'public-host': 'localhost', 'public-host-key': TEST_KEY + 'x' }],
    ['a key one character short', { 'public-host': 'localhost', 'public-host-key': TEST_KEY.slice(0, -1) }],
    ['an unknown public host', { 'public-host': 'nope.example', 'public-host-key': TEST_KEY }],
    ['the admin host named as public host', { 'public-host': 'admin.localhost', 'public-host-key': TEST_KEY }],
  ];
  for (const [name, headers] of cases) {
    it(`401 with ${name}`, async () => {
      for (const path of ['/anvil/api', '/ping/ping', '/anvil/api/ping']) {
        const reply = await anvil.request(path, { host: 'admin.localhost', headers });
        expect(reply.status).toBe(401);
        expect(reply.json()).toEqual({ error: 'Unauthorized', code: 'ANVIL_ERR_UNAUTHORIZED' });
      }
    });
  }
});

describe('publishing, private and disabled APIs, rollback', () => {
  it('deploys private, publishes with GET then PUT, disables, and rolls back', async () => {
    const first = await deploy(VERSION_1);
    expect(first.status).toBe(201);
    const { key, release: r1 } = first.json();
    expect(key).toBe('shop');
    expect(r1).toMatch(/^r-\d{8}-\d{9}-[0-9a-f]{4}$/);

    // Private by default: hidden on the public host, callable on the admin host.
    expect((await anvil.request('/shop/version')).status).toBe(404);
    expect((await anvil.request('/shop/version')).json()).toEqual({ error: 'Not Found', code: 'ANVIL_ERR_NOT_FOUND' });
    expect((await anvil.admin('/shop/version')).json()).toEqual({ version: 1 });

    const list = await anvil.admin('/anvil/api');
    expect(list.json()).toEqual(['ping', 'shop']);

    // Publish: GET the record, then PUT it back active and public.
    const record = (await anvil.admin('/anvil/api/shop')).json();
    expect(record).toMatchObject({ key: 'shop', release: r1, active: true, public: false, releases: [] });
    expect(typeof record.created_at).toBe('string');
    expect((await put('shop', { active: true, release: record.release, public: true })).status).toBe(204);
    expect((await anvil.request('/shop/version')).json()).toEqual({ version: 1 });

    // A redeploy keeps it public and switches the release.
    const second = await deploy(VERSION_2);
    const r2 = second.json().release;
    expect(r2 > r1).toBe(true);
    expect((await anvil.request('/shop/version')).json()).toEqual({ version: 2 });
    const afterRedeploy = (await anvil.admin('/anvil/api/shop')).json();
    expect(afterRedeploy).toMatchObject({ release: r2, active: true, public: true, releases: [r1] });

    // Rollback is a PUT naming an earlier release.
    expect((await put('shop', { active: true, release: r1, public: true })).status).toBe(204);
    expect((await anvil.request('/shop/version')).json()).toEqual({ version: 1 });
    expect((await anvil.admin('/anvil/api/shop')).json()).toMatchObject({ release: r1, releases: [r2] });

    // Private again: public host 404, admin host still serves.
    expect((await put('shop', { active: true, release: r1, public: false })).status).toBe(204);
    expect((await anvil.request('/shop/version')).status).toBe(404);
    expect((await anvil.admin('/shop/version')).status).toBe(200);

    // Disabled: 404 on every host.
    expect((await put('shop', { active: false, release: r1, public: false })).status).toBe(204);
    expect((await anvil.request('/shop/version')).status).toBe(404);
    expect((await anvil.admin('/shop/version')).status).toBe(404);

    // Delete: refused while active, then gone.
    await put('shop', { active: true, release: r1, public: false });
    expect((await anvil.admin('/anvil/api/shop', { method: 'DELETE' })).status).toBe(409);
    await put('shop', { active: false, release: r1, public: false });
    expect((await anvil.admin('/anvil/api/shop', { method: 'DELETE' })).status).toBe(204);
    expect((await anvil.admin('/anvil/api/shop')).status).toBe(404);
    expect((await anvil.admin('/anvil/api')).json()).toEqual(['ping']);
  });

  it('keeps the last 7 earlier releases', async () => {
    const releases: string[] = [];
    for (let i = 0; i < 9; i++) {
      const reply = await deploy(
        VERSION_3.replace('version: 3', `version: ${100 + i}`).replace('key: shop', 'key: many'),
      );
      releases.push(reply.json().release);
    }
    const record = (await anvil.admin('/anvil/api/many')).json();
    expect(record.release).toBe(releases[8]);
    expect(record.releases).toEqual(releases.slice(1, 8).reverse());
    // The pruned one can no longer be rolled back to.
    expect((await put('many', { active: true, release: releases[0], public: false })).status).toBe(404);
  });

  it('PUT refuses each bad field with a message naming it, and unknown keys or releases with 404', async () => {
    await deploy(VERSION_1.replace('key: shop', 'key: strict'));
    const record = (await anvil.admin('/anvil/api/strict')).json();

    const missing = await put('strict', { release: record.release });
    expect(missing.status).toBe(400);
    expect(missing.json().error).toContain('"active"');
    expect(missing.json().error).toContain('"public"');
    expect(missing.json().error).not.toContain('"release"');

    const wrong = await put('strict', { active: 'yes', release: 7, public: true });
    expect(wrong.status).toBe(400);
    expect(wrong.json().errors).toEqual([
      expect.stringContaining('"active" must be a boolean'),
      expect.stringContaining('"release" must be a string'),
    ]);

    const notJson = await anvil.admin('/anvil/api/strict', { method: 'PUT', body: '{oops' });
    expect(notJson.status).toBe(400);
    expect(notJson.json().error).toMatch(/JSON/);

    expect((await put('nothing-here', { active: true, release: record.release, public: true })).status).toBe(404);
    const unknownRelease = await put('strict', { active: true, release: 'r-20000101-000000000-abcd', public: true });
    expect(unknownRelease.status).toBe(404);
    expect(unknownRelease.json().error).toContain('r-20000101-000000000-abcd');
  });
});

describe('a public host with a path', () => {
  it('serves exactly one API, with the full request path as the endpoint path', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'anvil-data-'));
    const added = anvilCli([
      'hosts',
      'add-public',
      'shop.localhost',
      '--env',
      'pro',
      '--key',
      'shop-host-key-0123456789',
      '--path',
      '/shop',
      '--data',
      dataDir,
    ]);
    expect(added.status).toBe(0);
    // An instance of its own, the host added to its data dir before it starts.
    const own = await startInstance({ dataDir });
    try {
      const yaml =
        'key: shop\nendpoints:\n  get /products/{id}:\n    Reply: { directive: ModifyMessage, body: { product: $.message.pathParam.id, env: $.memory.anvil-env, path: $.message.path } }\n';
      const shopAdmin = { 'public-host': 'shop.localhost', 'public-host-key': 'shop-host-key-0123456789' };
      const deployed = await own.request('/anvil/api', {
        host: 'admin.localhost',
        method: 'POST',
        body: tarGz({ 'api.yaml': yaml }),
        headers: { ...shopAdmin, 'content-type': 'application/gzip' },
      });
      expect(deployed.status).toBe(201);
      const release = deployed.json().release;
      const publish = await own.request('/anvil/api/shop', {
        host: 'admin.localhost',
        method: 'PUT',
        body: JSON.stringify({ active: true, release, public: true }),
        headers: shopAdmin,
      });
      expect(publish.status).toBe(204);

      const reply = await own.request('/products/42', { host: 'shop.localhost' });
      expect(reply.json()).toEqual({ product: '42', env: 'pro', path: '/products/42' });
      // The shop is not an API of the default public host.
      expect((await own.request('/shop/products/42')).status).toBe(404);
      // The default host's key does not open the shop host's management API.
      expect((await own.admin('/anvil/api/shop')).status).toBe(404);
    } finally {
      await own.dispose();
    }
  });

  it('is picked up by a running instance when added with the CLI', async () => {
    expect((await anvil.request('/x', { host: 'late.localhost' })).status).toBe(404);
    const added = anvilCli([
      'hosts',
      'add-public',
      'late.localhost',
      '--env',
      'dev',
      '--key',
      'late-host-key-0123456789',
      '--data',
      anvil.dataDir,
    ]);
    expect(added.status).toBe(0);
    const health = await eventually(async () => {
      const reply = await anvil.request('/anvil/api', {
        host: 'admin.localhost',
        headers: { 'public-host': 'late.localhost', 'public-host-key': 'late-host-key-0123456789' },
      });
      return reply.status === 200 ? reply : null;
    });
    expect(health.json()).toEqual([]);
  });
});
