import { cp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { failureLines, junitReport, tapReport } from '../../src/testing/reporters.js';
import { runTests, type TestRun } from '../../src/testing/run-tests.js';
import { readTestFile } from '../../src/testing/test-file.js';
import { useTempDir } from '../helpers/temp-dir.js';

const TESTED = fileURLToPath(new URL('../fixtures/apis/tested', import.meta.url));

const failures = (run: TestRun) =>
  run.cases.filter((c) => c.failure !== null).map((c) => `${c.name}: ${failureLines(c, c.failure!).join(' | ')}`);

describe("anvil test runs an API folder's tests in this process, on the real engine and sandbox", () => {
  const work = useTempDir('anvil-runner-');

  it("the fixture's cases pass: fixtures, mocks of an upstream and of a bus API, the test clock, Maps per env", async () => {
    const run = await runTests(TESTED);
    expect(run.errors).toEqual([]);
    expect(failures(run)).toEqual([]);
    expect(run.files).toEqual(['tests/notes.yaml', 'tests/pro.yaml']);
    expect(run.cases.map((c) => c.name)).toContain('the rate limit counts, then its window passes on the test clock');
    expect(run.cases).toHaveLength(16);
  });

  it("an API under compat: hefesto answers a refused model in the original's words", async () => {
    const run = await runTests(fileURLToPath(new URL('../fixtures/original', import.meta.url)));
    expect(run.errors).toEqual([]);
    expect(failures(run)).toEqual([]);
    expect(run.cases).toHaveLength(3);
  });

  it('a case that fails says where (file:line:col of its step), what was expected and what came, with the answer and the log', async () => {
    await cp(TESTED, work.path(), { recursive: true });
    await work.put(
      'tests/notes.yaml',
      [
        'cases:',
        '  - name: a wrong expectation',
        '    steps:',
        '      - request: { path: /notes, headers: { api-key: dev-key } }',
        '        expect: { status: 200 }',
        '      - request: { path: /notes/5, headers: { api-key: dev-key } }',
        '        expect: { status: 200, headers: { x-missing: "1" }, body: { title: five } }',
        '  - name: an upstream that has no mock',
        '    request: { path: /weather/oslo, headers: { api-key: dev-key } }',
        '    expect: { status: 200 }',
        '',
      ].join('\n'),
    );
    await work.put(
      'tests/pro.yaml',
      'env: pro\ncases:\n  - { name: fine, request: { path: /greeting, headers: { api-key: pro-key } }, expect: { status: 200 } }\n',
    );
    const run = await runTests(work.path());
    const [wrong, unmocked, fine] = run.cases;
    expect(fine!.failure).toBeNull();
    expect(wrong!.failure!.at).toBe('tests/notes.yaml:6:9');
    expect(wrong!.failure!.step).toBe('GET /notes/5');
    expect(wrong!.failure!.mismatches).toEqual([
      { where: 'status', expected: '200', actual: '404' },
      { where: 'header x-missing', expected: '"1"', actual: '(absent)' },
      { where: 'body.title', expected: '"five"', actual: '(absent)' },
    ]);
    expect(failureLines(wrong!, wrong!.failure!)).toContain('answer: 404 {"error":"note 5 not found"}');
    const unmockedLines = failureLines(unmocked!, unmocked!.failure!).join('\n');
    expect(unmockedLines).toContain('status: expected 200, got 502');
    expect(unmockedLines).toMatch(/log: warn directive error .*weather\.example/);

    // An answer whose text holds newlines stays inside the TAP block, each line a comment.
    run.cases[1]!.failure!.answer = { status: 201, headers: [], body: Buffer.from('one\ntwo') };
    const tap = tapReport(run);
    expect(tap.slice(0, 3)).toEqual(['TAP version 13', '1..3', 'not ok 1 - tests/notes.yaml › a wrong expectation']);
    expect(tap).toContain('ok 3 - tests/pro.yaml › fine');
    const junit = junitReport(run).join('\n');
    expect(junit).toContain('<testsuites name="anvil test" tests="3" failures="2"');
    expect(junit).toContain('<failure message="status: expected 200, got 404">');
  });

  it('a mock with a query matches it in any order of its parameters; a header can be matched by a regular expression; TAP and JUnit stay well-formed', async () => {
    await cp(TESTED, work.path(), { recursive: true });
    await rm(join(work.path(), 'tests/pro.yaml'));
    await work.put(
      'api.yaml',
      (await readFile(join(TESTED, 'api.yaml'), 'utf8')).replace(
        'queryParams: { city: $.message.pathParam.city }',
        'queryParams: { units: metric, city: $.message.pathParam.city }',
      ),
    );
    await work.put(
      'tests/notes.yaml',
      [
        'mocks:',
        '  http: [{ url: "https://weather.example/v1/now?units=metric&city=oslo", body: { celsius: 4 } }]',
        'cases:',
        '  - name: matched',
        '    request: { path: /weather/oslo, headers: { api-key: dev-key } }',
        "    expect: { status: 200, headers: { content-type: { matches: '^application/json' } }, body: { celsius: 4 } }",
        '  - name: created, not 200',
        '    request: { verb: POST, path: /notes, headers: { api-key: dev-key }, body: { title: two } }',
        '    expect: { status: 200 }',
        '',
      ].join('\n'),
    );
    const run = await runTests(work.path());
    expect(run.cases[0]!.failure).toBeNull();
    expect(run.cases[1]!.failure!.mismatches).toEqual([{ where: 'status', expected: '200', actual: '201' }]);
    // An answer whose text holds newlines stays inside the TAP block, each line a comment.
    run.cases[1]!.failure!.answer = { status: 201, headers: [], body: Buffer.from('one\ntwo') };
    const tap = tapReport(run);
    expect(
      tap.filter((l) => !/^(TAP version 13|1\.\.\d+|(not )?ok \d+ - .*| {2}---| {2}\.\.\.| {2}# .*)$/.test(l)),
    ).toEqual([]);
    const bad = readTestFile(
      "cases:\n  - name: a\n    request: { path: /x }\n    expect: { headers: { x: { matches: '(' } } }\n",
      'tests/t.yaml',
      { env: 'dev', now: 0 },
    );
    expect(bad.ok ? [] : bad.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^"matches" of header x is not a regular expression: /),
    ]);
    expect(junitReport({ files: ['tests/t.yaml'], errors: ['tests/t.yaml:1:1 broken'], cases: [], ms: 1 })[1]).toBe(
      '<testsuites name="anvil test" tests="1" failures="1" time="0.001">',
    );
  });

  it('every case starts from a fresh data dir, removed once the case is over', async () => {
    const before = (await readdir(tmpdir())).filter((n) => n.startsWith('anvil-test-case-')).length;
    await cp(TESTED, work.path(), { recursive: true });
    await work.put(
      'tests/notes.yaml',
      [
        'cases:',
        '  - { name: one, request: { verb: POST, path: /notes, headers: { api-key: dev-key }, body: { title: a } }, expect: { body: { id: 1 } } }',
        '  - { name: two, request: { verb: POST, path: /notes, headers: { api-key: dev-key }, body: { title: b } }, expect: { body: { id: 1 } } }',
        '',
      ].join('\n'),
    );
    await rm(join(work.path(), 'tests/pro.yaml'));
    const run = await runTests(work.path(), { filter: 'o' });
    expect(failures(run)).toEqual([]);
    expect(run.cases.map((c) => c.name)).toEqual(['one', 'two']);
    expect((await readdir(tmpdir())).filter((n) => n.startsWith('anvil-test-case-')).length).toBe(before);
  });

  it("a folder that does not validate is reported once per env, with the loader's file:line:col", async () => {
    await cp(TESTED, work.path(), { recursive: true });
    await work.put('api.yaml', 'key: tested\nendpoints:\n  get /x:\n    A: { directive: NoSuchThing }\n');
    const run = await runTests(work.path());
    expect(run.cases).toEqual([]);
    expect(run.errors[0]).toBe('the API is not valid for env dev:');
    expect(run.errors.join('\n')).toMatch(/api\.yaml:4:\d+ \[get \/x › A\] .*NoSuchThing/);
    expect(run.errors.filter((e) => e.startsWith('the API is not valid'))).toEqual([
      'the API is not valid for env dev:',
      'the API is not valid for env pro:',
    ]);
  });
});

describe('test files are checked, and their mistakes point at file, line and column', () => {
  const read = (text: string) => readTestFile(text, 'tests/t.yaml', { env: 'dev', now: 0 });
  const messages = (text: string) => {
    const reading = read(text);
    return reading.ok ? [] : reading.errors.map((e) => `${e.line}:${e.column} ${e.message}`);
  };

  it('unknown fields, wrong types, a case without a request, a bad duration', () => {
    expect(messages('cases:\n  - name: a\n    request: { path: /x, verbb: GET }\n')).toEqual([
      '3:26 unknown field "verbb" in "cases.0.request" (allowed: verb, path, query, headers, body, ip)',
    ]);
    expect(messages('cases:\n  - name: a\n    request: { path: x }\n')).toEqual([
      '3:22 "cases.0.request.path" must start with / (got "x")',
    ]);
    expect(messages('cases:\n  - name: a\n    expect: { status: 200 }\n')).toEqual([
      '2:5 case "a" has no "request" (or "steps"): what should it send?',
    ]);
    expect(messages('cases:\n  - name: a\n    steps:\n      - expect: { status: 200 }\n')).toEqual([
      '4:9 this step has no "request": what should it send?',
    ]);
    expect(messages('cases:\n  - name: a\n')).toEqual([
      '2:5 case "a" has no "request" (or "steps"): what should it send?',
    ]);
    expect(messages('cases:\n  - name: a\n    steps:\n      - advance: soon\n')).toEqual([
      '4:18 "advance" must be a duration such as 61s, 5m, 2h, 1d or 1500 (ms) (got "soon")',
    ]);
    expect(messages('nope: 1\n')).toEqual([
      '1:1 the file needs the field "cases"',
      '1:1 unknown field "nope" in the file (allowed: env, clock, fixtures, mocks, cases)',
    ]);
    expect(messages('cases: [\n')[0]).toMatch(/^2:1 /);
  });

  it('a case keeps its line; defaults are filled in (GET, 127.0.0.1, status 200 for mocks)', () => {
    const reading = read(
      'mocks:\n  http: [{ url: "https://a.example/x" }]\ncases:\n  - name: a\n    request: { path: /x, query: { q: 1 } }\n',
    );
    expect(reading.ok).toBe(true);
    if (!reading.ok) return;
    const [only] = reading.cases;
    expect(only!.at).toEqual({ line: 4, column: 11 });
    expect(only!.steps).toEqual([
      {
        kind: 'request',
        request: { verb: 'GET', path: '/x', query: 'q=1', headers: {}, body: undefined, ip: '127.0.0.1' },
        expect: {},
        at: { line: 5, column: 5 },
      },
    ]);
    expect(only!.mocks.http).toEqual([
      { verb: 'GET', url: 'https://a.example/x', status: 200, headers: {}, body: undefined },
    ]);
  });
});
