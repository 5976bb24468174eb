import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';

// Issue 21, quotas on shared things: an API's request log (Log → logs/YYYY-MM-DD.jsonl in its data
// dir) rotates by size and is pruned by total size and age; the files on disk after many requests.
// `rotating` asks api.yaml for 1 KiB files and 4 KiB in all; `aging` keeps 2 days; the instance's
// ceilings are lowered with --max-log-file/--max-log-bytes/--max-log-days.
const logging = (key: string, limits: string) => `key: ${key}
${limits}
endpoints:
  get /hit/{n}:
    Reply: { directive: ModifyMessage, body: { n: $.message.pathParam.n } }
after:
  Log: { directive: Log, groups: [AFTER_FLOW] }
`;

const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

let anvil: TestInstance;
const logsOf = (key: string) => join(anvil.dataDir, 'localhost', 'dev', key, 'logs');
const sizes = (dir: string) =>
  Object.fromEntries(readdirSync(dir).map((name) => [name, statSync(join(dir, name)).size]));
const loggedPaths = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean))
    .map((line) => (JSON.parse(line) as { path: string }).path);

beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      rotating: { 'api.yaml': logging('rotating', 'limits: { logFileKb: 1, logKb: 4 }') },
      aging: { 'api.yaml': logging('aging', 'limits: { logDays: 2, logKb: 100000 }') },
    },
    args: ['--max-threads', '1', '--max-log-file', '64KiB', '--max-log-bytes', '256KiB', '--max-log-days', '30'],
  });
});
afterAll(async () => anvil?.dispose());

describe('the request log under its quotas', () => {
  it('rotates at the file size and keeps the newest files within the total; every request is answered', async () => {
    mkdirSync(logsOf('rotating'), { recursive: true });
    writeFileSync(join(logsOf('rotating'), 'notes.txt'), 'not a log file: left alone');
    for (let n = 0; n < 60; n++) expect((await anvil.request(`/rotating/hit/${n}`)).status).toBe(200);
    await eventually(() => loggedPaths(logsOf('rotating')).includes('/hit/59'));

    const files = sizes(logsOf('rotating'));
    const logs = Object.keys(files).filter((name) => name.endsWith('.jsonl'));
    expect(logs.length).toBeGreaterThanOrEqual(3);
    for (const name of logs) {
      expect(name).toMatch(new RegExp(`^${today()}(\\.\\d+)?\\.jsonl$`));
      expect(files[name]).toBeLessThanOrEqual(1024);
    }
    expect(logs.reduce((total, name) => total + files[name]!, 0)).toBeLessThanOrEqual(4096);
    expect(files['notes.txt']).toBeGreaterThan(0);
    // The oldest went first: what is left is the last requests, without a gap.
    const paths = loggedPaths(logsOf('rotating'));
    const first = Number(paths[0]!.slice('/hit/'.length));
    expect(first).toBeGreaterThan(0);
    expect(paths.sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)))).toEqual(
      Array.from({ length: 60 - first }, (_, i) => `/hit/${first + i}`),
    );
    await eventually(
      async () =>
        (sample(await scrapeMetrics(anvil), 'anvil_log_files_removed_total', {
          host: 'localhost',
          api: 'rotating',
          reason: 'size',
        }) ?? 0) >= 1,
    );
  });

  it("removes files older than the API's days when it opens its file, and keeps younger ones", async () => {
    const dir = logsOf('aging');
    mkdirSync(dir, { recursive: true });
    for (const name of [`${daysAgo(40)}.jsonl`, `${daysAgo(3)}.1.jsonl`, `${daysAgo(1)}.jsonl`])
      writeFileSync(join(dir, name), '{"path":"/old"}\n');
    expect((await anvil.request('/aging/hit/1')).status).toBe(200);
    await eventually(() => loggedPaths(dir).includes('/hit/1'));
    expect(readdirSync(dir).sort()).toEqual([`${daysAgo(1)}.jsonl`, `${today()}.jsonl`]);
    await eventually(
      async () =>
        sample(await scrapeMetrics(anvil), 'anvil_log_files_removed_total', {
          host: 'localhost',
          api: 'aging',
          reason: 'age',
        }) === 2,
    );
  });
});
