import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { ANVIL_BIN } from '../helpers/instance.js';
import { waitFor } from '../helpers/wait-for.js';

// `anvil dev [folder…]` on folders outside the clone: an embedded instance that serves them and
// redeploys on every edit, with output for a person (issue 45).

const api = (greeting: string, directive = 'ModifyMessage') => `key: notes
endpoints:
  get /hi:
    Reply: { directive: ${directive}, body: { greeting: ${greeting} } }
  get /boom:
    Boom: { directive: Boom }
`;
const BOOM = "export default function Boom(): void {\n  throw new Error('no rows');\n}\n";

let dev: ChildProcess | null = null;
let work = '';

afterEach(async () => {
  if (dev !== null && dev.exitCode === null) {
    const exited = new Promise((resolve) => dev!.once('exit', resolve));
    dev.kill('SIGTERM');
    await exited;
  }
  dev = null;
  rmSync(work, { recursive: true, force: true });
});

describe('anvil dev', () => {
  it("serves a folder anywhere, prints each request and a directive's error with file:line:col, redeploys an edit, names a broken edit by file:line:col, says when it is fixed, disables a deleted folder", async () => {
    work = mkdtempSync(join(tmpdir(), 'anvil-dev-test-'));
    const folder = join(work, 'notes');
    mkdirSync(folder);
    writeFileSync(join(folder, 'api.yaml'), api('one'));
    mkdirSync(join(folder, 'Directives'));
    writeFileSync(join(folder, 'Directives/Boom.ts'), BOOM);
    dev = spawn(process.execPath, [ANVIL_BIN, 'dev', 'notes', '--port', '0', '--data', join(work, 'data')], {
      cwd: work,
      env: { ...process.env, NO_COLOR: '1' },
    });
    let output = '';
    dev.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    dev.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    onTestFailed(() => console.log(`anvil dev printed:\n${output}`));

    const port = Number(
      (
        await waitFor(() => /serving on http:\/\/localhost:(\d+)\//.exec(output), {
          what: 'the serving line',
          timeoutMs: 30_000,
        })
      )[1],
    );
    const greeting = async () => {
      const response = await fetch(`http://localhost:${port}/notes/hi`);
      return response.status === 200 ? ((await response.json()) as { greeting: string }).greeting : response.status;
    };
    expect(await greeting()).toBe('one');
    // Each request is a line, and a directive's error names the author's file:line:col.
    await waitFor(() => /\d\d:\d\d:\d\d GET \/notes\/hi 200 \d+\.\d ms/.test(output), {
      what: 'the request line',
      timeoutMs: 30_000,
    });
    expect((await fetch(`http://localhost:${port}/notes/boom`)).status).toBe(500);
    await waitFor(() => output.includes('error notes [Boom] Boom: no rows (at Directives/Boom.ts:2:9) (500)'), {
      what: 'the directive error line',
      timeoutMs: 30_000,
    });

    const edited = Date.now();
    writeFileSync(join(folder, 'api.yaml'), api('two'));
    await waitFor(async () => (await greeting()) === 'two', { what: 'the edit served', timeoutMs: 30_000 });
    process.stdout.write(`anvil dev: edit → served in ${Date.now() - edited} ms\n`);
    // The release serves as soon as it is recorded; the line saying so may come a moment later.
    await waitFor(() => /redeployed notes \(release r-/.test(output), {
      what: 'the redeployed line',
      timeoutMs: 30_000,
    });

    writeFileSync(join(folder, 'api.yaml'), api('three', 'NoSuchThing'));
    await waitFor(() => output.includes('error notes is invalid (1 error(s)); the last good release keeps serving'), {
      what: 'the invalid edit reported',
      timeoutMs: 30_000,
    });
    await waitFor(
      () => / {2}notes\/api\.yaml:4:\d+ \[get \/hi › Reply\] unknown directive "NoSuchThing"/.test(output),
      { what: 'the error with its file:line:col', timeoutMs: 30_000 },
    );
    expect(await greeting()).toBe('two');

    writeFileSync(join(folder, 'api.yaml'), api('two'));
    await waitFor(() => /fixed notes: notes serves release r-/.test(output), {
      what: 'the revert said to be fixed',
      timeoutMs: 30_000,
    });

    rmSync(folder, { recursive: true, force: true });
    await waitFor(async () => (await greeting()) === 404, {
      what: 'the deleted folder no longer served',
      timeoutMs: 30_000,
    });
    await waitFor(() => /deleted notes: notes is disabled/.test(output), {
      what: 'the deleted line',
      timeoutMs: 30_000,
    });
  }, 150_000);

  it('refuses a folder without api.yaml, saying what it takes', async () => {
    work = mkdtempSync(join(tmpdir(), 'anvil-dev-test-'));
    dev = spawn(process.execPath, [ANVIL_BIN, 'dev', work], { env: { ...process.env, NO_COLOR: '1' } });
    let stderr = '';
    dev.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => dev!.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('has no api.yaml');
    expect(stderr).toContain('anvil create-api <name> makes one');
  });
});
