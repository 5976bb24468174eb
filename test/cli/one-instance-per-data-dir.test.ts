import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ANVIL_BIN, eventually, startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';

// One instance per data directory: `anvil start` holds <data>/.anvil/instance.lock (its PID). A
// second start on the same directory refuses, naming that PID, and changes nothing; a lock whose
// process is gone is taken over; a clean stop removes it.

const API = `key: hello
endpoints:
  get /hi:
    Reply: { directive: ModifyMessage, body: { hi: true } }
`;
const apis = { hello: { 'api.yaml': API } };

const started: TestInstance[] = [];
const dirs: string[] = [];
async function start(...args: Parameters<typeof startInstance>): Promise<TestInstance> {
  const instance = await startInstance(...args);
  started.push(instance);
  return instance;
}
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-data-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  // Last started first: instances here share their data dirs.
  for (const instance of started.splice(0).reverse()) await instance.dispose();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const lockFile = (dir: string) => join(dir, '.anvil', 'instance.lock');

/** The PID of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid!;
}

/** Runs `anvil start` on `dir` to its exit (killed, and failing the test, if it serves instead). */
async function startToExit(
  dir: string,
  apisDir: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [ANVIL_BIN, 'start', '--port', '0', '--data', dir, '--apis', apisDir, '--publish'],
    {
      env: { ...process.env, ANVIL_PUBLIC_HOST_KEY: TEST_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

describe('one instance per data directory', () => {
  it('refuses a second start on the same directory with the PID of the first, changing nothing; the first keeps serving', async () => {
    const first = await start({ apis });
    const lockBefore = readFileSync(lockFile(first.dataDir), 'utf8');
    expect(JSON.parse(lockBefore)).toMatchObject({ pid: first.pid, port: first.port });
    const platformFiles = readdirSync(join(first.dataDir, '.anvil')).sort();

    const otherApis = mkdtempSync(join(tmpdir(), 'anvil-apis-'));
    dirs.push(otherApis);
    mkdirSync(join(otherApis, 'other'));
    writeFileSync(join(otherApis, 'other', 'api.yaml'), API.replace('key: hello', 'key: other'));
    const second = await startToExit(first.dataDir, otherApis);

    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `anvil: data directory ${first.dataDir} is in use by another Anvil instance: PID ${first.pid}`,
    );
    expect(second.stderr).toContain(`port ${first.port}`);
    expect(second.stdout).not.toContain('"msg":"listening"');
    // Nothing of the directory changed: the same lock, no new files, the other API not deployed.
    expect(readFileSync(lockFile(first.dataDir), 'utf8')).toBe(lockBefore);
    expect(readdirSync(join(first.dataDir, '.anvil')).sort()).toEqual(platformFiles);
    expect((await first.admin('/anvil/api')).json()).toEqual(['hello']);
    expect((await first.request('/hello/hi')).json()).toEqual({ hi: true });
    expect(first.child.exitCode).toBeNull();
  });

  it('takes over a lock left by a process that is gone', async () => {
    const dir = dataDir();
    const pid = await deadPid();
    mkdirSync(join(dir, '.anvil'));
    writeFileSync(
      lockFile(dir),
      JSON.stringify({ pid, startedAt: '2020-01-01T00:00:00.000Z', port: 8080, token: 'left-behind' }),
    );

    const anvil = await start({ dataDir: dir, apis });
    expect((await anvil.request('/hello/hi')).json()).toEqual({ hi: true });
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toMatchObject({ pid: anvil.pid, port: anvil.port });
    await eventually(() =>
      anvil.logLines().some((l) => l.msg === `took over the instance lock of PID ${pid}, which is no longer running`),
    );
  });

  it('removes the lock on a clean stop; the next start on the directory serves', async () => {
    const first = await start({ apis });
    expect(await first.stop()).toBe(0);
    expect(existsSync(lockFile(first.dataDir))).toBe(false);

    const second = await start({ dataDir: first.dataDir, apis });
    expect((await second.request('/hello/hi')).json()).toEqual({ hi: true });
    expect(JSON.parse(readFileSync(lockFile(first.dataDir), 'utf8')).pid).toBe(second.pid);
    expect(second.logLines().some((l) => String(l.msg).startsWith('took over'))).toBe(false);
  });

  for (const stale of [false, true]) {
    it(`of two starts at once on ${stale ? 'a directory with a stale lock' : 'a fresh directory'}, one serves and the other refuses naming it`, async () => {
      const dir = dataDir();
      if (stale) {
        mkdirSync(join(dir, '.anvil'));
        writeFileSync(
          lockFile(dir),
          JSON.stringify({ pid: await deadPid(), startedAt: '2020-01-01T00:00:00.000Z', token: 'left-behind' }),
        );
      }
      const results = await Promise.allSettled([start({ dataDir: dir, apis }), start({ dataDir: dir, apis })]);
      const served = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
      expect(served).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toContain('instance exited with 1 before serving');
      expect(refused[0]).toContain(`in use by another Anvil instance: PID ${served[0]!.pid}`);
      expect((await served[0]!.request('/hello/hi')).json()).toEqual({ hi: true });
      expect(readdirSync(join(dir, '.anvil')).filter((f) => f.startsWith('instance.lock'))).toEqual(['instance.lock']);
    });
  }
});
