import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli, type CliResult } from '../helpers/cli.js';
import { ANVIL_BIN, startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { waitFor } from '../helpers/wait-for.js';

// The developer's loop of issue 6, driven through the real `anvil` command against a started
// instance: create-api → edit → validate → deploy → private call → publish → public call →
// second release → rollback → disable. The CLI reaches the instance as admin.localhost (RFC 6761).

const DEV_KEY = 'dev-key-change-me';

let anvil: TestInstance;
beforeAll(async () => {
  anvil = await startInstance({ publish: false });
});
afterAll(async () => {
  await anvil.dispose();
});

const work = useTempDir('anvil-cli-');

function writeDotEnv(key = TEST_KEY): void {
  writeFileSync(
    join(work.path(), '.env'),
    `# where "dev" deploys to\nDEPLOY_ENDPOINT_DEV=http://admin.localhost:${anvil.port}/anvil/api\nPUBLIC_HOST_DEV=localhost\nAPI_KEY_DEV=${key}\n`,
  );
}

/** `anvil …` in the work folder, with no deploy target in the environment (only .env counts). */
function cli(...args: string[]): CliResult {
  const env: Record<string, string> = { NO_COLOR: '1' };
  const result = anvilCli(args, { cwd: work.path(), env });
  return result;
}

function edit(relative: string, change: (text: string) => string): void {
  const file = join(work.path(), relative);
  writeFileSync(file, change(readFileSync(file, 'utf8')));
}

const publicGet = (path: string) => anvil.request(path, { headers: { 'api-key': DEV_KEY } });
const privateGet = (path: string) => anvil.admin(path, { headers: { 'api-key': DEV_KEY } });

describe('the developer loop', () => {
  it('create-api → validate → deploy → publish → second release → rollback → disable', async () => {
    const created = cli('create-api', 'shop');
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toContain('created shop/');
    expect(created.stdout).toContain('api.yaml');

    // An edit with a mistake: validate names the file, line, column and label.
    edit(
      'shop/api.yaml',
      (text) => `${text}\n  get /version:\n    Version: { directive: ModifyMessag, body: { version: 1 } }\n`,
    );
    const lines = readFileSync(join(work.path(), 'shop/api.yaml'), 'utf8').split('\n');
    const line = lines.findIndex((l) => l.includes('ModifyMessag')) + 1;
    const invalid = cli('validate', 'shop');
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toContain('shop is not valid: 1 error(s)');
    expect(invalid.stderr).toMatch(
      new RegExp(
        `shop/api\\.yaml:${line}:\\d+ \\[get /version › Version\\] unknown directive "ModifyMessag" \\(did you mean "ModifyMessage"\\?\\)`,
      ),
    );

    // A deploy of the broken folder is refused locally: nothing reaches the server.
    writeDotEnv();
    const refused = cli('deploy', 'shop', 'dev');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('nothing was sent');
    expect((await anvil.admin('/anvil/api')).json()).toEqual([]);

    edit('shop/api.yaml', (text) => text.replace('ModifyMessag,', 'ModifyMessage,'));
    const valid = cli('validate', 'shop');
    expect(valid.status, valid.stderr).toBe(0);
    expect(valid.stdout).toContain('valid shop');

    const first = cli('deploy', 'shop', 'dev', '--json');
    expect(first.status, first.stdout + first.stderr).toBe(0);
    const release1 = JSON.parse(first.stdout) as { ok: boolean; key: string; release: string; public: boolean };
    expect(release1).toMatchObject({ ok: true, key: 'shop', public: false });

    // Private until published: the admin host reaches it, the public host does not.
    expect((await privateGet('/shop/version')).json()).toEqual({ version: 1 });
    expect((await privateGet('/shop/hello/Ann')).json()).toEqual({ message: 'Hello, Ann!', times: 1 });
    expect((await publicGet('/shop/version')).status).toBe(404);

    const published = cli('publish', 'shop', 'dev');
    expect(published.status, published.stderr).toBe(0);
    expect(published.stdout).toContain(`published shop release ${release1.release}`);
    expect((await publicGet('/shop/version')).json()).toEqual({ version: 1 });
    expect((await publicGet('/shop/ping')).status).toBe(200);
    expect((await anvil.request('/shop/ping')).status).toBe(401); // CheckKey of the skeleton

    edit('shop/api.yaml', (text) => text.replace('version: 1', 'version: 2'));
    const second = cli('deploy', 'shop', 'dev');
    expect(second.status, second.stderr).toBe(0);
    const release2 = /release (r-\S+)/.exec(second.stdout)![1]!;
    expect(release2).not.toBe(release1.release);
    expect(second.stdout).toContain('public: serving now');
    expect((await publicGet('/shop/version')).json()).toEqual({ version: 2 });

    const status = cli('status', 'shop', 'dev', '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({
      key: 'shop',
      release: release2,
      releases: [release1.release],
      active: true,
      public: true,
    });

    const rolledBack = cli('rollback', 'shop', 'dev');
    expect(rolledBack.status, rolledBack.stderr).toBe(0);
    expect(rolledBack.stdout).toContain(`rolled back shop release ${release1.release}`);
    expect((await publicGet('/shop/version')).json()).toEqual({ version: 1 });

    const disabled = cli('disable', 'shop', 'dev');
    expect(disabled.status, disabled.stderr).toBe(0);
    expect((await publicGet('/shop/version')).status).toBe(404);
    expect((await privateGet('/shop/version')).status).toBe(404);
    const shown = cli('status', 'shop', 'dev');
    expect(shown.stdout).toMatch(/shop\s+disabled/);
    expect(shown.stdout).toContain(`${release1.release} (current)`);
  });

  it('rollback --to and publish --release switch to a named release; an unknown one is refused', async () => {
    expect(cli('create-api', 'flip').status).toBe(0);
    writeDotEnv();
    const r1 = JSON.parse(cli('deploy', 'flip', 'dev', '--json').stdout).release as string;
    edit('flip/Maps/main.json', (text) => text.replace('"Hello"', '"Hi"'));
    const r2 = JSON.parse(cli('deploy', 'flip', 'dev', '--json').stdout).release as string;

    expect(cli('publish', 'flip', 'dev', '--release', r1).status).toBe(0);
    expect((await publicGet('/flip/hello/Bo')).json()).toMatchObject({ message: 'Hello, Bo!' });
    expect(cli('rollback', 'flip', 'dev', '--to', r2).status).toBe(0);
    expect((await publicGet('/flip/hello/Bo')).json()).toMatchObject({ message: 'Hi, Bo!' });

    const unknown = cli('rollback', 'flip', 'dev', '--to', 'r-20000101-000000000-0000');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('flip has no release "r-20000101-000000000-0000"');
    expect(unknown.stderr).toContain(`kept: ${r1}`);
  });

  it('refuses to replace a key that serves another API unless --replace; a new version of the same API deploys as before', async () => {
    expect(cli('create-api', 'taken').status).toBe(0);
    writeDotEnv();
    const first = JSON.parse(cli('deploy', 'taken', 'dev', '--json').stdout).release as string;
    expect(cli('publish', 'taken', 'dev').status).toBe(0);

    // Another folder with the same key and none of its endpoints (as create-api under a name in use would make).
    edit(
      'taken/api.yaml',
      () => 'key: taken\nendpoints:\n  get /stock:\n    Stock: { directive: ModifyMessage, body: { stock: 3 } }\n',
    );
    const refused = cli('deploy', 'taken', 'dev');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('taken already exists in dev and serves another API: nothing was sent');
    expect(refused.stderr).toContain('it serves get /hello/{name}, get /ping');
    expect(refused.stderr).toContain('this folder serves get /stock');
    expect(refused.stderr).toContain('deploy again with --replace');
    expect(JSON.parse(cli('status', 'taken', 'dev', '--json').stdout)).toMatchObject({ release: first });
    expect((await publicGet('/taken/hello/Ann')).status).toBe(200);

    const replaced = cli('deploy', 'taken', 'dev', '--replace');
    expect(replaced.status, replaced.stderr).toBe(0);
    expect((await publicGet('/taken/stock')).json()).toEqual({ stock: 3 });

    // One endpoint in common is a new version of the same API: no flag needed.
    edit(
      'taken/api.yaml',
      (text) => `${text}  get /count:\n    Count: { directive: ModifyMessage, body: { count: 1 } }\n`,
    );
    expect(cli('deploy', 'taken', 'dev').status).toBe(0);
    expect((await publicGet('/taken/count')).json()).toEqual({ count: 1 });
  });

  it("list shows the host's keys; tail prints the request log, filtered, and follows it", async () => {
    expect(cli('create-api', 'logged').status).toBe(0);
    writeDotEnv();
    expect(cli('deploy', 'logged', 'dev').status).toBe(0);
    expect(cli('publish', 'logged', 'dev').status).toBe(0);
    expect(JSON.parse(cli('list', 'dev', '--json').stdout)).toMatchObject({
      ok: true,
      keys: expect.arrayContaining(['logged']),
    });
    expect(cli('list', 'dev').stdout.split('\n')).toContain('logged');

    expect((await publicGet('/logged/hello/Ann')).status).toBe(200);
    expect((await anvil.request('/logged/ping')).status).toBe(401); // no api-key: CheckKey refuses, Log still writes
    // Log writes after the answer: wait until both lines are there.
    const lines = await waitFor(
      () => {
        const printed = cli('tail', 'logged', 'dev', '--no-follow', '--json')
          .stdout.trim()
          .split('\n')
          .filter((l) => l !== '');
        return printed.length === 2 ? printed.map((l) => JSON.parse(l) as { status: number; path: string }) : null;
      },
      { what: 'two lines in the request log' },
    );
    expect(lines.map((l) => l.status)).toEqual([200, 401]);
    const human = cli('tail', 'logged', 'dev', '--no-follow');
    expect(human.stdout).toMatch(/ 200 GET \S*\/hello\/Ann \d/);
    const only4xx = cli('tail', 'logged', 'dev', '--no-follow', '--status', '4xx');
    expect(only4xx.stdout).toMatch(/ 401 GET \S*\/ping/);
    expect(only4xx.stdout).not.toContain('/hello/Ann');

    // Following: a new request's line appears while the command runs.
    const follower = spawn(process.execPath, [ANVIL_BIN, 'tail', 'logged', 'dev', '--lines', '0'], {
      cwd: work.path(),
      env: { ...process.env, NO_COLOR: '1' },
    });
    let followed = '';
    follower.stdout.on('data', (chunk: Buffer) => (followed += chunk.toString()));
    try {
      await waitFor(
        async () => {
          await publicGet('/logged/hello/Bo');
          return /200 GET \S*\/hello\/Bo/.test(followed);
        },
        { what: 'the followed line of GET /hello/Bo', everyMs: 300 },
      );
    } finally {
      follower.kill();
    }
  });

  it('explains a wrong key, an unknown API, a missing .env and an unreachable instance', async () => {
    expect(cli('create-api', 'oops').status).toBe(0);

    // The env left out: the folder's name is not taken for an env.
    const noEnv = cli('deploy', 'oops');
    expect(noEnv.status).toBe(1);
    expect(noEnv.stderr).toContain('deploy needs the env to deploy to: oops is an API folder, not an env');
    expect(noEnv.stderr).toContain('e.g. anvil deploy oops dev');

    const noTarget = cli('deploy', 'oops', 'dev');
    expect(noTarget.status).toBe(1);
    expect(noTarget.stderr).toContain(
      'env "dev" is not configured: DEPLOY_ENDPOINT_DEV, PUBLIC_HOST_DEV, API_KEY_DEV are not set',
    );

    writeDotEnv('not-the-key');
    const wrongKey = cli('deploy', 'oops', 'dev');
    expect(wrongKey.status).toBe(1);
    expect(wrongKey.stderr).toContain('401 Unauthorized');
    expect(wrongKey.stderr).toContain('check PUBLIC_HOST_DEV and API_KEY_DEV');

    writeDotEnv();
    const unknown = cli('publish', 'nobody', 'dev', '--json');
    expect(unknown.status).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({
      ok: false,
      error: 'no API "nobody" on public host localhost (dev)',
      status: 404,
    });

    // The environment wins over .env (a CI secret overrides the file).
    const down = anvilCli(['status', 'oops', 'dev'], {
      cwd: work.path(),
      env: { NO_COLOR: '1', DEPLOY_ENDPOINT_DEV: 'http://admin.localhost:9/anvil/api' },
    });
    expect(down.status).toBe(1);
    expect(down.stderr).toContain(
      'cannot reach http://admin.localhost:9/anvil/api/oops (DEPLOY_ENDPOINT_DEV): ECONNREFUSED — is the instance running?',
    );
  });

  it('create-api refuses a bad name and an existing folder unless --force', () => {
    const bad = cli('create-api', 'Shop_1');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('"Shop_1" is not a valid API name');

    expect(cli('create-api', 'twice').status).toBe(0);
    edit('twice/api.yaml', () => 'key: twice\nendpoints: {}\n');
    const again = cli('create-api', 'twice');
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('twice already exists and is not empty');
    expect(readFileSync(join(work.path(), 'twice/api.yaml'), 'utf8')).toBe('key: twice\nendpoints: {}\n');

    expect(cli('create-api', 'twice', '--force').status).toBe(0);
    expect(readFileSync(join(work.path(), 'twice/api.yaml'), 'utf8')).toContain('get /ping');
  });

  it('has --help with an example on every command', () => {
    const commands = [
      'start',
      'create-api',
      'validate',
      'deploy',
      'publish',
      'disable',
      'rollback',
      'status',
      'hosts',
      'hosts list',
      'hosts add-admin',
      'hosts add-public',
      'hosts remove',
      'jobs',
      'jobs count',
      'jobs get',
      'jobs flush',
      'jobs requeue-failed',
      'bench',
      'list',
      'tail',
      'dev',
    ];
    for (const command of commands) {
      const help = cli(...command.split(' '), '--help');
      expect(help.status, command).toBe(0);
      expect(help.stdout, command).toMatch(/Examples?:\n {2}anvil /);
    }
  });
});
