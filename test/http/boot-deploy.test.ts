import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';

// `anvil start --apis DIR [--publish]` (SPEC §9): boot deploys, invalid folders skipped, restarts.

function api(key: string, variant: string): string {
  return `key: ${key}
endpoints:
  get /variant:
    Reply: { directive: ModifyMessage, body: { variant: ${variant} } }
`;
}

// Line 4 holds the unknown directive: the report must name it.
const INVALID = `key: broken
endpoints:
  get /x:
    Oops: { directive: NoSuchDirective }
`;

const started: TestInstance[] = [];
async function start(...args: Parameters<typeof startInstance>): Promise<TestInstance> {
  const instance = await startInstance(...args);
  started.push(instance);
  return instance;
}
afterEach(async () => {
  // Last started first: a restarted instance shares its data dir with the one before it.
  for (const instance of started.splice(0).reverse()) await instance.dispose();
});

describe('boot deploys', () => {
  it('serves the valid folder, reports the invalid one with its errors and skips it, and keeps serving', async () => {
    const anvil = await start({
      apis: {
        good: { 'api.yaml': api('good', 'fine') },
        'bad-folder': { 'api.yaml': INVALID },
        'not-an-api': { 'README.md': 'no api.yaml here' },
      },
    });

    expect((await anvil.request('/good/variant')).json()).toEqual({ variant: 'fine' });
    expect((await anvil.admin('/anvil/api')).json()).toEqual(['good']);
    expect((await anvil.admin('/anvil/api/broken')).status).toBe(404);
    expect((await anvil.request('/broken/x')).status).toBe(404);
    expect((await anvil.admin('/broken/x')).status).toBe(404);

    // The structured log names the folder and every error with its line.
    const logged = await eventually(() => anvil.logLines().find((l) => l.folder === 'bad-folder'));
    expect(logged.msg).toContain('bad-folder');
    expect(logged.errors).toEqual([
      expect.stringMatching(/^api\.yaml:4:\d+ \[get \/x › Oops\] unknown directive "NoSuchDirective"/),
    ]);
    // And so does the human summary.
    await eventually(() =>
      /skipped bad-folder: 1 error\(s\), first: api\.yaml:4:\d+ \[get \/x › Oops\]/.test(anvil.output()),
    );
    expect(anvil.output()).not.toMatch(/not-an-api/);

    // Still serving afterwards.
    for (let i = 0; i < 3; i++) expect((await anvil.request('/good/variant')).status).toBe(200);
    expect(anvil.child.exitCode).toBeNull();
  });

  it('keeps the release of an unchanged folder across a restart and makes a new one for a changed folder', async () => {
    const first = await start({
      apis: {
        same: { 'api.yaml': api('same', 'v1'), 'Maps/main.json': '{"a":1}' },
        changed: { 'api.yaml': api('changed', 'v1') },
      },
    });
    const sameBefore = (await first.admin('/anvil/api/same')).json();
    const changedBefore = (await first.admin('/anvil/api/changed')).json();
    expect(sameBefore.releases).toEqual([]);
    expect(changedBefore.releases).toEqual([]);
    expect(await first.stop()).toBe(0);

    const second = await start({
      dataDir: first.dataDir,
      apis: {
        same: { 'api.yaml': api('same', 'v1'), 'Maps/main.json': '{"a":1}' },
        changed: { 'api.yaml': api('changed', 'v2') },
      },
    });
    const sameAfter = (await second.admin('/anvil/api/same')).json();
    expect(sameAfter.release).toBe(sameBefore.release);
    expect(sameAfter.releases).toEqual([]);
    expect((await second.request('/same/variant')).json()).toEqual({ variant: 'v1' });

    const changedAfter = (await second.admin('/anvil/api/changed')).json();
    expect(changedAfter.release).not.toBe(changedBefore.release);
    expect(changedAfter.releases).toEqual([changedBefore.release]);
    expect((await second.request('/changed/variant')).json()).toEqual({ variant: 'v2' });
  });

  it('a folder that became invalid is skipped at the next boot: its last good release keeps serving', async () => {
    const first = await start({ apis: { flaky: { 'api.yaml': api('flaky', 'good') } } });
    const before = (await first.admin('/anvil/api/flaky')).json();
    await first.stop();
    const second = await start({
      dataDir: first.dataDir,
      apis: { flaky: { 'api.yaml': INVALID.replace('key: broken', 'key: flaky') } },
    });
    await eventually(() => second.logLines().some((l) => l.folder === 'flaky'));
    expect((await second.admin('/anvil/api/flaky')).json()).toMatchObject({ release: before.release, releases: [] });
    expect((await second.request('/flaky/variant')).json()).toEqual({ variant: 'good' });
  });

  it('a change in Maps alone also makes a new release at the next boot', async () => {
    const first = await start({ apis: { mapped: { 'api.yaml': api('mapped', 'v1'), 'Maps/main.json': '{"a":1}' } } });
    const before = (await first.admin('/anvil/api/mapped')).json();
    await first.stop();
    const second = await start({
      dataDir: first.dataDir,
      apis: { mapped: { 'api.yaml': api('mapped', 'v1'), 'Maps/main.json': '{"a":2}' } },
    });
    const after = (await second.admin('/anvil/api/mapped')).json();
    expect(after.release).not.toBe(before.release);
    expect(after.releases).toEqual([before.release]);
  });

  it('without --publish the APIs are private: 404 on the public host, 200 through the admin host', async () => {
    const anvil = await start({ publish: false, apis: { hidden: { 'api.yaml': api('hidden', 'secret') } } });
    const publicReply = await anvil.request('/hidden/variant');
    expect(publicReply.status).toBe(404);
    expect(publicReply.json()).toEqual({ error: 'Not Found', code: 'ANVIL_ERR_NOT_FOUND' });
    const adminReply = await anvil.admin('/hidden/variant');
    expect(adminReply.status).toBe(200);
    expect(adminReply.json()).toEqual({ variant: 'secret' });
    expect((await anvil.admin('/anvil/api/hidden')).json()).toMatchObject({ active: true, public: false });
  });

  it('a restart without --publish keeps an API that was published public', async () => {
    const first = await start({ apis: { shown: { 'api.yaml': api('shown', 'v1') } } });
    expect((await first.request('/shown/variant')).status).toBe(200);
    await first.stop();
    const second = await start({
      dataDir: first.dataDir,
      publish: false,
      apis: { shown: { 'api.yaml': api('shown', 'v2') } },
    });
    expect((await second.request('/shown/variant')).json()).toEqual({ variant: 'v2' });
  });
});
