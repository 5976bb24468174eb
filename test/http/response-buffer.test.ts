import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { eventually, startInstance, writeApi, type ApiFiles, type TestInstance } from '../helpers/instance.js';
import { quotaRefusals, sample, scrapeMetrics } from '../helpers/metrics.js';
import { slowReader, type SlowReader } from '../helpers/slow-reader.js';
import { tarGz } from '../helpers/tarball.js';
import { waitFor } from '../helpers/wait-for.js';

// Issue 21, quotas on shared things: response bytes the router holds for clients that do not read.
// A large static file is streamed from disk a chunk at a time, so slow readers cost the router
// little; large bodies made in memory count against --response-buffer (their heads too), and
// beyond it the connections that have held bytes the longest are cut — of the API most over its
// share of the buffer, so that slow readers of one API never cut another's (issue 41).
const MiB = 1024 * 1024;
const FILE_BYTES = 8 * MiB;
/** A body made in memory, larger than what the kernel's socket buffers on loopback usually take of it
 * for a reader that stopped (a few MiB; tcp_rmem may grow to 32 MiB). */
const BIG_BODY_BYTES = 16 * MiB;
/** What 40 stalled readers of an 8 MiB file may add to the router's RSS (docs/operate.md, Limits and quotas). */
const RSS_GROWTH_BOUND_MB = 64;
/** What the head of a response of these APIs takes, at most: it is held with the body. */
const HEAD_BYTES_AT_MOST = 1024;

let anvil: TestInstance;
let apis: string;
let file: Buffer;

/** How many files named `name` the router has open (from /proc/<pid>/fd). */
function routerOpenFiles(name: string): number {
  const dir = `/proc/${anvil.pid}/fd`;
  return readdirSync(dir).filter((fd) => {
    try {
      return readlinkSync(join(dir, fd)).endsWith(`/${name}`);
    } catch {
      return false; // closed meanwhile
    }
  }).length;
}

function routerRssMb(): number {
  const status = readFileSync(`/proc/${anvil.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

beforeAll(async () => {
  apis = mkdtempSync(join(tmpdir(), 'anvil-response-buffer-'));
  file = randomBytes(FILE_BYTES);
  writeApi(join(apis, 'site'), {
    'api.yaml':
      'key: site\nendpoints:\n  get /file/{name}:\n    Serve: { directive: ServeStatic, file: $.message.pathParam.name }\n',
  });
  mkdirSync(join(apis, 'site', 'Assets'));
  writeFileSync(join(apis, 'site', 'Assets', 'big.bin'), file);
  // cpuMs: building and copying out 16 MiB can take more than the default 50 ms on a loaded machine.
  writeApi(join(apis, 'maker'), {
    'api.yaml':
      'key: maker\nlimits: { memoryMb: 256, cpuMs: 1000 }\nendpoints:\n  get /big:\n    Make: { directive: MakeBig }\n',
    'Directives/MakeBig.js': `export default (state) => { state.message.body = 'x'.repeat(${BIG_BODY_BYTES}); };\n`,
  });
  // Another API with a large answer made in memory: a victim of slow readers of `maker`.
  writeApi(join(apis, 'download'), {
    'api.yaml':
      'key: download\nlimits: { memoryMb: 256, cpuMs: 1000 }\nendpoints:\n  get /big:\n    Make: { directive: MakeBig }\n',
    'Directives/MakeBig.js': `export default (state) => { state.message.body = 'd'.repeat(${BIG_BODY_BYTES}); };\n`,
  });
  writeFileSync(join(apis, 'site', 'Assets', 'mid.txt'), 'y'.repeat(100 * 1024));
  writeApi(join(apis, 'neighbour'), {
    'api.yaml': `key: neighbour
endpoints:
  get /ping:
    Ping: { directive: Ping }
  get /over-the-bus:
    Get: { directive: Pull, host: $.memory.anvil-localhost, path: /site/file/mid.txt, target: got }
    Reply: { directive: ModifyMessage, body: { got: $.memory.got } }
`,
  });
  anvil = await startInstance({
    apis: {
      site: join(apis, 'site'),
      maker: join(apis, 'maker'),
      download: join(apis, 'download'),
      neighbour: join(apis, 'neighbour'),
      'serve-static': join(import.meta.dirname, '../fixtures/apis/serve-static'),
    },
    args: ['--response-buffer', '40MiB'],
  });
});
afterAll(async () => {
  await anvil?.dispose();
  rmSync(apis, { recursive: true, force: true });
});

describe('response bytes held by the router', () => {
  it('streams a large static file whole to a client that reads', async () => {
    const got = await fetchBytes('/site/file/big.bin');
    expect(got.length).toBe(FILE_BYTES);
    expect(got.equals(file)).toBe(true);
  });

  it('sends bodies byte for byte (binary) and answers HEAD without a body', async () => {
    // test/fixtures/apis/serve-static serves its data dir's storage/public (ServeStatic storage: true).
    const storage = join(anvil.dataDir, 'localhost/dev/serve-static/storage');
    mkdirSync(join(storage, 'public'), { recursive: true });
    writeFileSync(
      join(storage, 'public/pixel.png'),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10, 0x80]),
    );
    const response = await request(`http://127.0.0.1:${anvil.port}/serve-static/storage/pixel.png`, {
      headers: { host: 'localhost' },
      dispatcher: anvil.agent,
    });
    const bytes = Buffer.from(await response.body.arrayBuffer());
    expect(response.statusCode).toBe(200);
    expect(bytes.equals(readFileSync(join(storage, 'public/pixel.png')))).toBe(true);
    expect(response.headers['content-length']).toBe(String(bytes.length));
    const head = await anvil.request('/serve-static/static/css/site.css', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(head.text).toBe('');
  });

  it('a file body goes as bytes where no client streams it: to a bus caller', async () => {
    const reply = await anvil.request('/neighbour/over-the-bus');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({ got: 'y'.repeat(100 * 1024) });
  });

  it("40 readers that stop reading a large static file keep the router's memory bounded; a neighbour answers meanwhile", async () => {
    // Warm: the code paths and the buffers a stream uses exist before the baseline.
    await fetchBytes('/site/file/big.bin');
    const before = routerRssMb();
    const readers: SlowReader[] = Array.from({ length: 40 }, () => slowReader(anvil.port, '/site/file/big.bin'));
    try {
      await Promise.all(readers.map((r) => r.headed));
      // Every stream opened the file before its head; a stream whose reader has not taken its last
      // chunk for 100 ms closes it. None open: every stream has stalled (or ended), nothing more comes.
      await waitFor(() => routerOpenFiles('big.bin') === 0, {
        what: 'the 40 streams of big.bin to stall (the router to close the file for each)',
      });
      const grown = routerRssMb() - before;
      expect(grown, `the router's RSS grew by ${grown.toFixed(1)} MB`).toBeLessThan(RSS_GROWTH_BOUND_MB);
      const started = Date.now();
      expect((await anvil.request('/neighbour/ping')).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_000);
      // A stalled stream holds at most its chunk in flight (the first one also the head).
      const held = sample(await scrapeMetrics(anvil), 'anvil_response_buffer_bytes', {});
      expect(held).toBeLessThanOrEqual(40 * (64 * 1024 + HEAD_BYTES_AT_MOST));
      // They get the whole file once they read again.
      const rest = await readers[0]!.readRest();
      expect(rest).toMatchObject({ status: 200, contentLength: FILE_BYTES, received: FILE_BYTES });
      expect(rest.body.equals(file)).toBe(true);
    } finally {
      for (const r of readers) r.destroy();
    }
  });

  it('large bodies from memory count against --response-buffer: past it, the connections held longest are cut', async () => {
    const readers: SlowReader[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const reader = slowReader(anvil.port, '/maker/big');
        readers.push(reader);
        await reader.headed;
      }
      // 16 MiB each (and its head) under a 40 MiB cap: two fit, and each newer one cuts the one held longest.
      const held = sample(await scrapeMetrics(anvil), 'anvil_response_buffer_bytes', {})!;
      expect(held).toBeGreaterThan(2 * BIG_BODY_BYTES);
      expect(held).toBeLessThan(2 * BIG_BODY_BYTES + 2 * HEAD_BYTES_AT_MOST);
      const results = await Promise.all(readers.map((r) => r.readRest()));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      // Which were cut depends on what the kernel took of each body meanwhile (one that left the
      // router whole is no longer held, so there is nothing to cut): usually the three oldest. Each
      // cut is counted, and the two newest always come whole.
      const cut = results.map((r) => r.received < BIG_BODY_BYTES);
      expect(cut.slice(3)).toEqual([false, false]);
      expect(cut.filter(Boolean).length).toBeGreaterThanOrEqual(1);
      expect(await quotaRefusals(anvil, 'maker', 'response_buffer')).toBe(cut.filter(Boolean).length);
      await eventually(async () => sample(await scrapeMetrics(anvil), 'anvil_response_buffer_bytes', {}) === 0);
    } finally {
      for (const r of readers) r.destroy();
    }
  });

  it("readers that stop reading one API's answers cut only that API's connections, never a slower reader of another API (issue 41, case 5)", async () => {
    const victim = slowReader(anvil.port, '/download/big');
    const attackers: SlowReader[] = [];
    try {
      await victim.headed;
      // Each API's share of the 40 MiB is 20 MiB while both hold bytes: maker, over its share,
      // loses its own oldest connections; the victim, within its share, holds on.
      for (let i = 0; i < 4; i++) {
        const reader = slowReader(anvil.port, '/maker/big');
        attackers.push(reader);
        await reader.headed;
      }
      const rest = await victim.readRest();
      expect(rest).toMatchObject({ status: 200, contentLength: BIG_BODY_BYTES, received: BIG_BODY_BYTES });
      expect(await quotaRefusals(anvil, 'download', 'response_buffer')).toBe(0);
      const results = await Promise.all(attackers.map((r) => r.readRest()));
      const cut = results.filter((r) => r.received < BIG_BODY_BYTES).length;
      expect(cut).toBeGreaterThanOrEqual(1);
      expect(results.at(-1)!.received).toBe(BIG_BODY_BYTES);
    } finally {
      victim.destroy();
      for (const r of attackers) r.destroy();
    }
  });
});

describe('response bytes held for the APIs of several public hosts', () => {
  // The cap is split between the hosts holding bytes first, then within a host between its APIs: a
  // tenant that deploys many APIs gains no share of another tenant's (issue 41, case 5). With shares
  // per API, the victim's 16 MiB would be the most over from the tenant's second answer on (3 APIs: 13.3 MiB each).
  const TENANT = { 'public-host': 'many-apis.localhost', 'public-host-key': 'many-apis-host-key-0123456789' };
  const TENANT_APIS = 4;
  const TENANT_BODY_BYTES = 12 * MiB;
  let two: TestInstance;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'anvil-data-'));
    const added = anvilCli([
      'hosts',
      'add-public',
      TENANT['public-host'],
      '--env',
      'dev',
      '--key',
      TENANT['public-host-key'],
      '--data',
      dataDir,
    ]);
    expect(added.status, added.stderr).toBe(0);
    two = await startInstance({
      dataDir,
      apis: { download: join(apis, 'download') },
      args: ['--response-buffer', '40MiB'],
    });
    for (let i = 0; i < TENANT_APIS; i++) await deployTenantApi(`big-${i}`);
  });
  afterAll(async () => {
    await two?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function deployTenantApi(key: string): Promise<void> {
    const files: ApiFiles = {
      'api.yaml': `key: ${key}\nlimits: { memoryMb: 256, cpuMs: 1000 }\nendpoints:\n  get /big:\n    Make: { directive: MakeBig }\n`,
      'Directives/MakeBig.js': `export default (state) => { state.message.body = 't'.repeat(${TENANT_BODY_BYTES}); };\n`,
    };
    const admin = { host: 'admin.localhost' };
    const deployed = await two.request('/anvil/api', {
      ...admin,
      method: 'POST',
      body: tarGz(files),
      headers: { ...TENANT, 'content-type': 'application/gzip' },
    });
    expect(deployed.status, deployed.text).toBe(201);
    const publish = await two.request(`/anvil/api/${key}`, {
      ...admin,
      method: 'PUT',
      body: JSON.stringify({ active: true, release: deployed.json().release, public: true }),
      headers: { ...TENANT, 'content-type': 'application/json' },
    });
    expect(publish.status, publish.text).toBe(204);
  }

  it("readers that stop reading the answers of many APIs of one host cut only that host's connections, never a slower reader of another host's one API", async () => {
    const victim = slowReader(two.port, '/download/big');
    const attackers: SlowReader[] = [];
    try {
      await victim.headed;
      // One non-reading answer on each of the tenant's APIs: the tenant's share is 20 MiB of the
      // 40 while both hosts hold bytes, so from its second answer on it loses its own oldest ones.
      for (let i = 0; i < TENANT_APIS; i++) {
        const reader = slowReader(two.port, `/big-${i}/big`, TENANT['public-host']);
        attackers.push(reader);
        await reader.headed;
      }
      const rest = await victim.readRest();
      expect(rest).toMatchObject({ status: 200, contentLength: BIG_BODY_BYTES, received: BIG_BODY_BYTES });
      expect(await quotaRefusals(two, 'download', 'response_buffer')).toBe(0);
      const results = await Promise.all(attackers.map((r) => r.readRest()));
      expect(results.map((r) => r.status)).toEqual(Array(TENANT_APIS).fill(200));
      const cut = results.map((r) => r.received < TENANT_BODY_BYTES);
      expect(cut.filter(Boolean).length).toBeGreaterThanOrEqual(1);
      expect(cut.at(-1)).toBe(false);
      const metrics = await scrapeMetrics(two);
      let counted = 0;
      for (let i = 0; i < TENANT_APIS; i++)
        counted +=
          sample(metrics, 'anvil_quota_refusals_total', {
            host: TENANT['public-host'],
            api: `big-${i}`,
            quota: 'response_buffer',
          }) ?? 0;
      expect(counted).toBe(cut.filter(Boolean).length);
    } finally {
      victim.destroy();
      for (const r of attackers) r.destroy();
    }
  });
});

/** The whole body, read as fast as it comes. */
async function fetchBytes(path: string): Promise<Buffer> {
  const reader = slowReader(anvil.port, path);
  await reader.headed;
  return (await reader.readRest()).body;
}
