import { describe, expect, it } from 'vitest';
import { useTempDir } from '../helpers/temp-dir.js';
import { loadApiFolder } from '../../src/deploy/api-yaml/load-api.js';
import { formatConfigError } from '../../src/shared/api-model/types.js';

const temp = useTempDir('anvil-api-');
const put = temp.put;

const yaml = (extra = '') => `key: shop
${extra}endpoints:
  get /x:
    Run: { directive: Work }
`;

async function errors(): Promise<string[]> {
  const result = await loadApiFolder(temp.path(), 'dev');
  return result.ok ? [] : result.errors.map(formatConfigError);
}

describe('custom directives at deploy time', () => {
  it('compiles JavaScript and TypeScript to a script defining __anvilDirective', async () => {
    await put('api.yaml', yaml());
    await put(
      'Directives/Work.ts',
      'type C = { n: number };\nexport default (state: unknown, config: C): number => config.n * 2;\n',
    );
    const result = await loadApiFolder(temp.path(), 'dev');
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.directiveCode.Work).toMatch(/^"use strict";\s*var __anvilDirective = /);
      expect(result.directiveCode.Work).not.toContain('type C');
    }
  });

  it('reports a syntax error with the file, line and column', async () => {
    await put('api.yaml', yaml());
    await put('Directives/Work.js', 'export default function (state) {\n  const x = ;\n}\n');
    expect(await errors()).toEqual(['Directives/Work.js:2:13 Unexpected ";"']);
  });

  it('reports a TypeScript syntax error with its position', async () => {
    await put('api.yaml', yaml());
    await put('Directives/Work.ts', 'export default (state: any, config: { n: number ) => 1;\n');
    const [error] = await errors();
    expect(error).toMatch(/^Directives\/Work\.ts:1:\d+ /);
  });

  it('refuses imports: a directive is one self-contained file', async () => {
    await put('api.yaml', yaml());
    await put(
      'Directives/Work.js',
      "import { readFileSync } from 'node:fs';\nexport default function () { return readFileSync('/etc/passwd'); }\n",
    );
    expect(await errors()).toEqual([
      expect.stringMatching(/^Directives\/Work\.js:1:\d+ imports are not available in directives \("node:fs"\)/),
    ]);
  });

  it('reports directive errors together with api.yaml errors', async () => {
    await put('api.yaml', yaml().replace('Work }', 'Work }\n    Oops: { directive: Nope }'));
    await put('Directives/Work.js', 'export default function ( {}\n');
    const all = await errors();
    expect(all).toHaveLength(2);
    expect(all[0]).toMatch(/^api\.yaml:5:\d+ \[get \/x › Oops\] unknown directive "Nope"/);
    expect(all[1]).toBe('Directives/Work.js:2:1 Expected ")" but found end of file');
  });
});

describe('limits in api.yaml', () => {
  it('accepts the three limits', async () => {
    await put('api.yaml', yaml('limits: { memoryMb: 32, cpuMs: 20, wallMs: 1000 }\n'));
    await put('Directives/Work.js', 'export default () => {};\n');
    const result = await loadApiFolder(temp.path(), 'dev');
    expect(result.ok && result.definition.limits).toEqual({ memoryMb: 32, cpuMs: 20, wallMs: 1000 });
  });

  it('refuses an unknown limit and out-of-range values, naming each', async () => {
    await put('api.yaml', yaml('limits:\n  memoryMb: 4\n  cpuMs: fast\n  threads: 9\n'));
    await put('Directives/Work.js', 'export default () => {};\n');
    expect(await errors()).toEqual([
      expect.stringMatching(
        /^api\.yaml:3:13 limit "memoryMb" \(isolate memory in MiB\) must be an integer from 8 to 4096/,
      ),
      expect.stringMatching(/^api\.yaml:4:10 limit "cpuMs" .* must be an integer from 1 to 60000/),
      expect.stringMatching(
        /^api\.yaml:5:3 unknown limit "threads" \(allowed: memoryMb, cpuMs, wallMs, jobPayloadKb, queuedJobs, queuedJobsKb, kvKb, logFileKb, logKb, logDays, filesKb, databaseKb\)/,
      ),
    ]);
  });

  it('accepts the quotas on shared stores, and refuses values out of range naming the quota', async () => {
    await put(
      'api.yaml',
      yaml('limits: { jobPayloadKb: 64, queuedJobs: 100, kvKb: 512, logFileKb: 1024, logKb: 4096, logDays: 7 }\n'),
    );
    await put('Directives/Work.js', 'export default () => {};\n');
    const result = await loadApiFolder(temp.path(), 'dev');
    expect(result.ok && result.definition.limits).toEqual({
      jobPayloadKb: 64,
      queuedJobs: 100,
      kvKb: 512,
      logFileKb: 1024,
      logKb: 4096,
      logDays: 7,
    });
    await put('api.yaml', yaml('limits:\n  kvKb: 0\n  logDays: 1.5\n'));
    expect(await errors()).toEqual([
      expect.stringMatching(
        /^api\.yaml:3:9 limit "kvKb" \(bytes of keys and values in the key-value store, in KiB\) must be an integer from 1 to 67108864/,
      ),
      expect.stringMatching(
        /^api\.yaml:4:12 limit "logDays" \(days a log file is kept\) must be an integer from 1 to 3650/,
      ),
    ]);
  });
});
