import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';

const greeter = join(import.meta.dirname, '../../apis/greeter');
const running: TestInstance[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.dispose()));
});

async function start(...args: Parameters<typeof startInstance>) {
  const instance = await startInstance(...args);
  running.push(instance);
  return instance;
}

describe('Maps with env overrides', () => {
  it('deep-merges Maps/dev over Maps/main on a dev host', async () => {
    const anvil = await start({ apis: { greeter }, args: ['--env', 'dev'] });
    const reply = await anvil.request('/greeter/hello/Ann');
    expect(reply.json()).toEqual({
      greeting: 'Hi (dev), Ann!',
      env: 'dev',
      // objects merge, arrays replace
      environment: { name: 'development', features: ['a', 'debug'], banner: true },
    });
  });

  it('deep-merges Maps/pro over Maps/main on a pro host', async () => {
    const anvil = await start({ apis: { greeter }, args: ['--env', 'pro'] });
    const reply = await anvil.request('/greeter/hello/Ann');
    expect(reply.json()).toEqual({ greeting: 'Hello, Ann!', env: 'pro', environment: { name: 'production', features: ['a'], banner: true } });
  });

  it('uses Maps/main alone in an env without overrides', async () => {
    const anvil = await start({ apis: { greeter }, args: ['--env', 'staging'] });
    expect((await anvil.request('/greeter/settings')).json()).toEqual({ greeting: 'Hello', punctuation: '!', environment: { name: 'base', features: ['a'], banner: true } });
  });
});

describe('a public host with a path', () => {
  it('serves exactly one API, with the full request path as the endpoint path', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'anvil-data-'));
    const added = anvilCli(['hosts', 'add-public', 'shop.localhost', '--env', 'pro', '--key', 'shop-host-key-0123456789', '--path', '/shop', '--data', dataDir]);
    expect(added.status).toBe(0);
    const anvil = await start({ dataDir });

    const yaml = 'key: shop\nendpoints:\n  get /products/{id}:\n    Reply: { directive: ModifyMessage, body: { product: $.message.pathParam.id, env: $.memory.anvil-env, path: $.message.path } }\n';
    const shopAdmin = { 'public-host': 'shop.localhost', 'public-host-key': 'shop-host-key-0123456789' };
    const deployed = await anvil.request('/anvil/api', { host: 'admin.localhost', method: 'POST', body: tarGz({ 'api.yaml': yaml }), headers: { ...shopAdmin, 'content-type': 'application/gzip' } });
    expect(deployed.status).toBe(201);
    const release = deployed.json().release;
    const publish = await anvil.request('/anvil/api/shop', { host: 'admin.localhost', method: 'PUT', body: JSON.stringify({ active: true, release, public: true }), headers: shopAdmin });
    expect(publish.status).toBe(204);

    const reply = await anvil.request('/products/42', { host: 'shop.localhost' });
    expect(reply.json()).toEqual({ product: '42', env: 'pro', path: '/products/42' });
    // The shop is not an API of the default public host.
    expect((await anvil.request('/shop/products/42')).status).toBe(404);
    // The default host's key does not open the shop host's management API.
    expect((await anvil.admin('/anvil/api/shop')).status).toBe(404);
  });

  it('is picked up by a running instance when added with the CLI', async () => {
    const anvil = await start({});
    expect((await anvil.request('/x', { host: 'late.localhost' })).status).toBe(404);
    const added = anvilCli(['hosts', 'add-public', 'late.localhost', '--env', 'dev', '--key', 'late-host-key-0123456789', '--data', anvil.dataDir]);
    expect(added.status).toBe(0);
    const health = await eventually(async () => {
      const reply = await anvil.request('/anvil/api', { host: 'admin.localhost', headers: { 'public-host': 'late.localhost', 'public-host-key': 'late-host-key-0123456789' } });
      return reply.status === 200 ? reply : null;
    });
    expect(health.json()).toEqual([]);
  });
});
