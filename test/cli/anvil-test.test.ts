import { execFile } from 'node:child_process';
import { cp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ANVIL_BIN } from '../helpers/instance.js';
import { useTempDir } from '../helpers/temp-dir.js';

// `anvil test [folder]` and `anvil deploy --test` as a user runs them (issue 45).

const TESTED = fileURLToPath(new URL('../fixtures/apis/tested', import.meta.url));

/** The real command, without blocking this process (a test's own server must answer meanwhile). */
function anvil(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [ANVIL_BIN, ...args],
      { cwd: options.cwd, env: { ...process.env, NO_COLOR: '1', ...options.env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
      },
    );
  });
}

const FAILING_CASE = `cases:
  - name: listed
    request: { path: /notes, headers: { api-key: dev-key } }
    expect: { status: 200 }
  - name: expects a title nobody wrote
    request: { path: /notes/1, headers: { api-key: dev-key } }
    expect: { status: 200, body: { title: imagined } }
`;

describe('anvil test', () => {
  const work = useTempDir('anvil-test-cli-');
  let server: Server | null = null;
  afterEach(async () => {
    await new Promise((resolve) => (server === null ? resolve(null) : server.close(resolve)));
    server = null;
  });

  it("passes the fixture API's cases and exits 0", async () => {
    const result = await anvil(['test', TESTED]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('✓ the weather comes from the mocked upstream');
    expect(result.stdout).toMatch(/16 case\(s\) in 2 file\(s\): 16 passed, 0 failed/);
  });

  it('create-api writes a first test, and it passes on the skeleton', async () => {
    expect((await anvil(['create-api', 'notes'], { cwd: work.path() })).status).toBe(0);
    const result = await anvil(['test', 'notes'], { cwd: work.path() });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('tests/hello.yaml');
    expect(result.stdout).toMatch(/4 case\(s\) in 1 file\(s\): 4 passed, 0 failed/);
  });

  it("a failing case prints expected against actual at the case's file:line, and exits 1 (human, JUnit, JSON)", async () => {
    await cp(TESTED, work.path(), { recursive: true });
    await rm(join(work.path(), 'tests/pro.yaml'));
    await work.put('tests/notes.yaml', FAILING_CASE);
    const human = await anvil(['test', work.path()]);
    expect(human.status).toBe(1);
    expect(human.stdout).toContain('✓ listed');
    expect(human.stdout).toContain('✗ expects a title nobody wrote');
    expect(human.stdout).toContain('tests/notes.yaml:6:5 GET /notes/1');
    expect(human.stdout).toContain('status: expected 200, got 404');
    expect(human.stdout).toContain('body.title: expected "imagined", got (absent)');
    expect(human.stderr).toMatch(/1 of 2 test case\(s\) failed/);

    const junit = await anvil(['test', work.path(), '--reporter', 'junit']);
    expect(junit.status).toBe(1);
    expect(junit.stdout).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="anvil test" tests="2" failures="1"/,
    );
    expect(junit.stdout).toContain(
      '<testcase classname="tests/notes.yaml" name="expects a title nobody wrote" file="tests/notes.yaml" line="5"',
    );

    const json = await anvil(['test', work.path(), '--json']);
    expect(json.status).toBe(1);
    const parsed = JSON.parse(json.stdout) as {
      ok: boolean;
      passed: number;
      failed: number;
      cases: Array<{ name: string; ok: boolean; line: number }>;
    };
    expect(parsed).toMatchObject({ ok: false, passed: 1, failed: 1 });
    expect(parsed.cases.map((c) => [c.name, c.ok, c.line])).toEqual([
      ['listed', true, 2],
      ['expects a title nobody wrote', false, 5],
    ]);
  });

  it('deploy --test sends nothing when a case fails, and deploys when they pass', async () => {
    const received: string[] = [];
    server = createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"this test server deploys nothing"}');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const env = {
      DEPLOY_ENDPOINT_DEV: `http://127.0.0.1:${port}/anvil/api`,
      PUBLIC_HOST_DEV: 'localhost',
      API_KEY_DEV: 'host-key',
    };
    await cp(TESTED, work.path(), { recursive: true });
    await rm(join(work.path(), 'tests/pro.yaml'));
    await work.put('tests/notes.yaml', FAILING_CASE);

    // --no-typecheck: the copy's directives import the typings by a path relative to the fixture's place.
    const refused = await anvil(['deploy', work.path(), 'dev', '--test', '--no-typecheck'], { env });
    expect(refused.status).toBe(1);
    expect(refused.stdout).toContain('status: expected 200, got 404');
    expect(refused.stderr).toMatch(/1 of 2 test case\(s\) failed: nothing was sent/);
    expect(received).toEqual([]);

    await work.put('tests/notes.yaml', FAILING_CASE.split('  - name: expects')[0]!);
    const sent = await anvil(['deploy', work.path(), 'dev', '--test', '--no-typecheck'], { env });
    expect(sent.stdout).toContain('1 case(s) in 1 file(s): 1 passed, 0 failed');
    expect(received.length).toBeGreaterThan(0);
    expect(sent.status).toBe(1); // the test server refuses the deploy itself
  });
});
