import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { freePort } from '../helpers/free-port.js';
import { ANVIL_BIN, startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { waitFor } from '../helpers/wait-for.js';

const root = join(import.meta.dirname, '../..');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-cli-'));
  dirs.push(dir);
  return dir;
};

describe('command line conventions', () => {
  it('anvil --version prints the package version', () => {
    const result = anvilCli(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
  });

  it('a usage mistake prints the message and one usage line, not the whole help', () => {
    const result = anvilCli(['validate', '--bogus']);
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      "error: unknown option '--bogus'",
      'usage: anvil validate [options] [dir]  (anvil validate --help for more)',
    ]);
    expect(anvilCli(['import', 'openapi']).stderr).toContain('usage: anvil import openapi [options] <spec>');
  });

  it('every anvil start option has its environment variable, shown in --help, checked like the flag', () => {
    const help = anvilCli(['start', '--help']).stdout.replace(/\s+/g, ' ');
    for (const variable of [
      'ANVIL_PORT',
      'ANVIL_MAX_THREADS',
      'ANVIL_REQUEST_TIMEOUT',
      'ANVIL_PUBLISH',
      'ANVIL_TRUSTED_PROXY',
    ])
      expect(help).toContain(`env: ${variable}`);
    const bad = anvilCli(['start', '--data', tempDir()], { env: { ANVIL_PORT: 'abc' } });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(
      "value 'abc' from env 'ANVIL_PORT' is invalid. --port must be an integer from 0 to 65535",
    );
  });

  it.each(['ANVIL_PORT', 'PORT'])('listens on the port %s names', async (variable) => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [ANVIL_BIN, 'start', '--data', tempDir(), '--cells', '1', '--drain-delay', '0'],
      { env: { ...process.env, [variable]: String(port), ANVIL_LOG_LEVEL: 'warn' }, stdio: 'ignore' },
    );
    try {
      const health = async () =>
        (
          await request(`http://127.0.0.1:${port}/anvil/health`, { headers: { host: 'admin.localhost' } }).catch(
            () => null,
          )
        )?.statusCode === 200;
      await waitFor(health, { what: `anvil on ${variable}=${port}`, timeoutMs: 30_000 });
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });

  describe('a port in use', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      port = await freePort();
      server = createServer();
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('names the port and the process that holds it', () => {
      const result = anvilCli(['start', '--port', String(port), '--data', tempDir(), '--cells', '1']);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(
        `anvil: port ${port} on 127.0.0.1 is already in use by node (pid ${process.pid}): stop it, or choose another port with --port (or ANVIL_PORT)`,
      );
    });
  });

  it('validate --env refuses an env the folder has no Maps folder for', () => {
    const typo = anvilCli(['validate', join(root, 'apis/greeter'), '--env', 'prd']);
    expect(typo.status).toBe(1);
    expect(typo.stderr).toContain('has no Maps/prd/ folder: its envs are dev, pro');
    expect(anvilCli(['validate', join(root, 'apis/greeter'), '--env', 'pro']).status).toBe(0);
    // A folder with no env folders at all is the same in every env.
    expect(anvilCli(['validate', join(root, 'apis/ping'), '--env', 'staging']).status).toBe(0);
  });
});

describe('anvil remove', () => {
  let anvil: TestInstance;
  beforeAll(async () => {
    anvil = await startInstance({ apis: { ping: join(root, 'apis/ping') } });
  });
  afterAll(() => anvil.dispose());

  it('refuses an active API with what to do, then removes it once disabled', async () => {
    const env = {
      NO_COLOR: '1',
      DEPLOY_ENDPOINT_DEV: `http://admin.localhost:${anvil.port}/anvil/api`,
      PUBLIC_HOST_DEV: 'localhost',
      API_KEY_DEV: TEST_KEY,
    };
    const active = anvilCli(['remove', 'ping', 'dev'], { env });
    expect(active.status).toBe(1);
    expect(active.stderr).toContain(
      'ping is active on public host localhost (dev): disable it first (anvil disable ping dev), then remove it',
    );

    expect(anvilCli(['disable', 'ping', 'dev'], { env }).status).toBe(0);
    const removed = anvilCli(['remove', 'ping', 'dev', '--json'], { env });
    expect(removed.status).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ ok: true, key: 'ping', removed: true });
    expect((await anvil.admin('/anvil/api/ping')).status).toBe(404);
    expect(anvilCli(['remove', 'ping', 'dev'], { env }).stderr).toContain(
      'no API "ping" on public host localhost (dev)',
    );
  });
});
