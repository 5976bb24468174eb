import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { eventually, startInstance, type Reply, type TestInstance } from '../helpers/instance.js';
import { quotaRefusals, sample, scrapeMetrics } from '../helpers/metrics.js';
import { tarGz } from '../helpers/tarball.js';

// Issue 41, case 3: a public host's disk total (--max-host-disk) over everything its APIs keep in
// the data directory (databases, files, caches, logs), measured by the router every few seconds;
// over it, every API of the host gets 507 on a write that makes data grow (database, files, jobs),
// other hosts write on, and deletes pass so that the tenant can make room. And the payload bytes
// of an API's queued jobs (--max-queued-job-bytes, limits.queuedJobsKb): 503, nothing stored.

const KIB = 1024;
const MIB = 1024 * KIB;
const OTHER = { 'public-host': 'other.localhost', 'public-host-key': 'other-host-key-0123456789' };

const api = (key: string, limits = '') => ({
  'api.yaml': `key: ${key}
${limits}
before:
  Connect: { directive: DatabaseConnect }
endpoints:
  post /save:
    Save: { directive: SaveFile, name: $.message.body.name, content: $.message.body.content }
    Reply: { directive: ModifyMessage, status: 201, body: { saved: $.message.body.name } }
  delete /file:
    Delete: { directive: DeleteFile, name: $.message.query.name }
    Reply: { directive: ModifyMessage, body: { deleted: $.message.query.name } }
  post /row:
    Insert: { directive: DatabaseQuery, sql: "insert into t (b) values (randomblob(1024))", mode: run }
    Reply: { directive: ModifyMessage, status: 201, body: { stored: true } }
  delete /rows:
    Delete: { directive: DatabaseQuery, sql: "delete from t", mode: run }
    Reply: { directive: ModifyMessage, body: { deleted: true } }
  post /job:
    Captured: { directive: SetMemory, target: captured, value: $.message.body.value }
    Queue: { directive: ForTheWorker, identifier: true, delay: 600 }
    Done: { directive: Ping }
`,
  'Assets/db/001.sql': 'CREATE TABLE t (b BLOB);\n',
});

let anvil: TestInstance;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'anvil-host-disk-'));
  const added = anvilCli([
    'hosts',
    'add-public',
    OTHER['public-host'],
    '--env',
    'dev',
    '--key',
    OTHER['public-host-key'],
    '--data',
    dataDir,
  ]);
  expect(added.status, added.stderr).toBe(0);
  anvil = await startInstance({
    dataDir,
    apis: {
      first: api('first'),
      second: api('second'),
      jobs: api('jobs', 'limits: { queuedJobsKb: 64 }'),
      'jobs-neighbour': api('jobs-neighbour'),
    },
    args: [
      '--max-host-disk',
      '6MiB',
      '--max-queued-job-bytes',
      '256KiB',
      '--body-limit',
      '4MiB',
      '--max-job-payload',
      '64KiB',
    ],
  });
  const admin = { host: 'admin.localhost', headers: OTHER };
  const deployed = await anvil.request('/anvil/api', {
    ...admin,
    method: 'POST',
    body: tarGz(api('elsewhere')),
    headers: { ...OTHER, 'content-type': 'application/gzip' },
  });
  expect(deployed.status, deployed.text).toBe(201);
  const publish = await anvil.request('/anvil/api/elsewhere', {
    ...admin,
    method: 'PUT',
    body: JSON.stringify({ active: true, release: deployed.json().release, public: true }),
    headers: { ...OTHER, 'content-type': 'application/json' },
  });
  expect(publish.status, publish.text).toBe(204);
});
afterAll(async () => {
  anvilCli(['jobs', 'flush', '--data', dataDir, '--json']);
  await anvil?.dispose();
});

const send = (method: string, path: string, body?: unknown, host?: string): Promise<Reply> =>
  body === undefined
    ? anvil.request(path, { method, host })
    : anvil.request(path, {
        method,
        host,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
const save = (key: string, name: string, bytes: number, host?: string) =>
  send('POST', `/${key}/save`, { name, content: 'x'.repeat(bytes) }, host);

describe('queued job bytes per API', () => {
  it('an API over its queued job bytes is refused with 503, retry-after and the limit; nothing stored; another API of the host still queues', async () => {
    // limits.queuedJobsKb 64: one job of a 20 KiB value passes, the second would make about 96 KiB
    // ForTheWorker freezes the memory and the message: a job of a 20 KiB value is about 48 KiB
    expect((await send('POST', '/jobs/job', { value: 'j'.repeat(20 * KIB) })).status).toBe(202);
    const full = await send('POST', '/jobs/job', { value: 'j'.repeat(20 * KIB) });
    expect(full.status).toBe(503);
    expect(full.headers['retry-after']).toBe('5');
    expect(full.json().error).toMatch(
      /^this job would make the payloads of the API's jobs queued and not finished \d+ bytes, over its quota of 65536 bytes \(api\.yaml limits\.queuedJobsKb, at most --max-queued-job-bytes\); retry later$/,
    );
    // a small one still fits
    expect((await send('POST', '/jobs/job', { value: 'small' })).status).toBe(202);
    // the neighbour has the instance's 256 KiB: five such jobs (about 242 KiB) pass, the sixth not
    for (let i = 0; i < 5; i++)
      expect((await send('POST', '/jobs-neighbour/job', { value: 'n'.repeat(20 * KIB) })).status).toBe(202);
    expect((await send('POST', '/jobs-neighbour/job', { value: 'n'.repeat(20 * KIB) })).status).toBe(503);
    expect(await quotaRefusals(anvil, 'jobs', 'queued_job_bytes')).toBe(1);
  });
});

describe('a public host over --max-host-disk', () => {
  it('gets 507 on the next write of any of its APIs (database, files, jobs); another host writes on; a delete makes room', async () => {
    // 3 MiB each: together over 6 MiB with what the host's APIs already keep (about 1 MiB)
    expect((await save('first', 'a.txt', 3 * MIB)).status).toBe(201);
    expect((await save('second', 'b.txt', 3 * MIB)).status).toBe(201);
    // The router measures every few seconds: the next writes are refused once it has.
    const refused = await eventually(
      async () => {
        const reply = await send('POST', '/first/row');
        return reply.status === 507 ? reply : null;
      },
      20_000,
      200,
    );
    expect(refused.json().error).toMatch(
      /^the public host localhost takes \d+ bytes of disk \(its APIs' databases, files, caches and logs\), over its quota of 6291456 bytes \(--max-host-disk\): writes are refused until deletes bring it back under$/,
    );
    // Another API of the host is refused too, once its thread looks at the host's marker again (at
    // most a second after it last did: before the measure, when it saved b.txt, it saw none).
    const file = await eventually(
      async () => {
        const reply = await save('second', 'c.txt', 10);
        return reply.status === 507 ? reply : null;
      },
      5_000,
      200,
    );
    expect(file.status).toBe(507);
    expect(file.json().error).toMatch(/over its quota of 6291456 bytes \(--max-host-disk\)/);
    const job = await send('POST', '/second/job', { value: 'v' });
    expect(job.status).toBe(507);
    expect(job.json().error).toMatch(/^the public host localhost takes \d+ bytes of disk/);
    // another host's API writes
    expect((await send('POST', '/elsewhere/row', undefined, OTHER['public-host'])).status).toBe(201);
    expect((await save('elsewhere', 'e.txt', 1000, OTHER['public-host'])).status).toBe(201);
    // deletes pass while over: rows and files
    expect((await send('DELETE', '/first/rows')).status).toBe(200);
    expect((await send('DELETE', '/first/file?name=a.txt')).status).toBe(200);
    // back under at the next measure: the host writes again
    await eventually(async () => ((await send('POST', '/second/row')).status === 201 ? true : null), 20_000, 200);
    expect((await save('first', 'd.txt', 10)).status).toBe(201);
    expect((await send('POST', '/first/job', { value: 'v' })).status).toBe(202);
    // A thread reports its APIs' refusals with its stats, every 2 s.
    await eventually(
      async () =>
        (await quotaRefusals(anvil, 'first', 'host_disk')) >= 1 &&
        (await quotaRefusals(anvil, 'second', 'host_disk')) >= 2
          ? true
          : null,
      10_000,
      200,
    );
    expect(
      sample(await scrapeMetrics(anvil), 'anvil_quota_refusals_total', {
        host: OTHER['public-host'],
        api: 'elsewhere',
        quota: 'host_disk',
      }) ?? 0,
    ).toBe(0);
  });
});
