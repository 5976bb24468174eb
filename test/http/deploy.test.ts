import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type Reply, type TestInstance } from '../helpers/instance.js';
import { tarGz, type TarInput } from '../helpers/tarball.js';

// POST /anvil/api (SPEC §6): deploying an API folder sent as a .tar.gz, raw or multipart.

const PING = 'key: ping\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n';

/** A small valid API whose endpoint says which variant was deployed. */
function api(key: string, variant = 'one'): string {
  return `key: ${key}
endpoints:
  get /variant:
    Reply: { directive: ModifyMessage, body: { variant: ${variant} } }
`;
}

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({ apis: { ping: { 'api.yaml': PING } } });
});
afterAll(async () => anvil?.dispose());

function postRaw(body: Buffer, contentType = 'application/gzip', on: TestInstance = anvil): Promise<Reply> {
  return on.admin('/anvil/api', { method: 'POST', body, headers: { 'content-type': contentType } });
}

function deploy(files: TarInput, on: TestInstance = anvil): Promise<Reply> {
  return postRaw(tarGz(files), 'application/gzip', on);
}

/** The body and content-type a fetch() would send for this form (undici 7 takes no global FormData). */
async function multipart(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const encoded = new Response(form);
  return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}

/** Every file name under `dir`, recursively. */
function fileNames(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => !d.isDirectory())
    .map((d) => d.name);
}

async function expectNotDeployed(key: string): Promise<void> {
  expect((await anvil.admin(`/anvil/api/${key}`)).status).toBe(404);
  expect((await anvil.admin('/anvil/api')).json()).not.toContain(key);
  expect((await anvil.admin(`/${key}/variant`)).status).toBe(404);
}

describe('POST /anvil/api: good archives', () => {
  it('deploys a raw application/gzip archive: 201 {key, release}, private, served on the admin host at once', async () => {
    const reply = await deploy({ 'api.yaml': api('raw-upload') });
    expect(reply.status).toBe(201);
    const body = reply.json();
    expect(Object.keys(body).sort()).toEqual(['key', 'release']);
    expect(body.key).toBe('raw-upload');
    expect(body.release).toMatch(/^r-\d{8}-\d{9}-[0-9a-f]{4}$/);

    const call = await anvil.admin('/raw-upload/variant');
    expect(call.status).toBe(200);
    expect(call.json()).toEqual({ variant: 'one' });
    // Private after its first deploy: the public host does not reveal it.
    expect((await anvil.request('/raw-upload/variant')).status).toBe(404);

    const record = (await anvil.admin('/anvil/api/raw-upload')).json();
    expect(record).toMatchObject({
      key: 'raw-upload',
      release: body.release,
      active: true,
      public: false,
      releases: [],
    });
  });

  it('deploys the multipart/form-data field "file"', async () => {
    const form = new FormData();
    form.append('comment', 'ignored');
    form.append(
      'file',
      new Blob([tarGz({ 'api.yaml': api('multipart-upload', 'form'), 'Maps/main.json': '{"a":1}' })], {
        type: 'application/gzip',
      }),
      'api.tar.gz',
    );
    const { body, contentType } = await multipart(form);
    expect(contentType).toMatch(/^multipart\/form-data; boundary=/);

    const reply = await postRaw(body, contentType);
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ key: 'multipart-upload', release: expect.stringMatching(/^r-/) });
    expect((await anvil.admin('/multipart-upload/variant')).json()).toEqual({ variant: 'form' });
  });

  it('refuses a multipart body without a "file" field', async () => {
    const form = new FormData();
    form.append(
      'archive',
      new Blob([tarGz({ 'api.yaml': api('wrong-field') })], { type: 'application/gzip' }),
      'api.tar.gz',
    );
    const { body, contentType } = await multipart(form);
    const reply = await postRaw(body, contentType);
    expect(reply.status).toBe(400);
    expect(reply.json().errors).toEqual(['multipart upload has no "file" field']);
    await expectNotDeployed('wrong-field');
  });

  it('deploys an archive whose single top-level folder holds api.yaml', async () => {
    const reply = await deploy({
      'my-api/': '',
      'my-api/api.yaml': api('nested-upload', 'nested'),
      'my-api/Maps/': '',
      'my-api/Maps/main.json': '{"ok":true}',
    });
    expect(reply.status).toBe(201);
    expect(reply.json().key).toBe('nested-upload');
    expect((await anvil.admin('/nested-upload/variant')).json()).toEqual({ variant: 'nested' });
  });

  it('makes a new release when identical content is posted again (documented choice for POST)', async () => {
    const archive = tarGz({ 'api.yaml': api('same-again') });
    const first = await postRaw(archive);
    expect(first.status).toBe(201);
    const r1 = first.json().release;

    const second = await postRaw(archive);
    expect(second.status).toBe(201);
    const r2 = second.json().release;
    expect(r2).not.toBe(r1);

    const third = await postRaw(archive);
    const r3 = third.json().release;
    expect(new Set([r1, r2, r3]).size).toBe(3);

    const record = (await anvil.admin('/anvil/api/same-again')).json();
    expect(record.release).toBe(r3);
    expect(record.releases).toEqual([r2, r1]);
    expect((await anvil.admin('/same-again/variant')).json()).toEqual({ variant: 'one' });
  });
});

describe('POST /anvil/api: invalid API folders are refused whole', () => {
  it('lists every error of api.yaml with file:line:col and the label, and deploys nothing', async () => {
    // Line numbers are the ones the errors must name.
    const yaml = [
      'key: several-errors', //                                    1
      'before:', //                                                2
      '  Check: { directive: CheckKey, expected: secret }', //     3  missing "current"
      'endpoints:', //                                             4
      '  get /x:', //                                              5
      '    Typo: { directive: Pnig }', //                          6  unknown directive
      '    Teapot: { directive: ThrowError, status: "418" }', //   7  wrong type
      '  get /y:', //                                              8
      '    Ping: { directive: Ping, extra: 1 }', //                9  unknown parameter
      'after:', //                                                 10
      '  OnError: { groups: [ERROR_FLOW] }', //                   11  no directive
      '',
    ].join('\n');
    const reply = await deploy({ 'api.yaml': yaml });
    expect(reply.status).toBe(400);
    const { errors, error } = reply.json();
    expect(errors).toEqual([
      expect.stringMatching(/^api\.yaml:3:\d+ \[before › Check\] .*"current"/),
      expect.stringMatching(/^api\.yaml:6:\d+ \[get \/x › Typo\] unknown directive "Pnig"/),
      expect.stringMatching(/^api\.yaml:7:\d+ \[get \/x › Teapot\] .*"status"/),
      expect.stringMatching(/^api\.yaml:9:\d+ \[get \/y › Ping\] .*"extra"/),
      expect.stringMatching(/^api\.yaml:11:\d+ \[after › OnError\] .*"directive"/),
    ]);
    // The unknown directive is pointed at its value: column of "Pnig" on line 6.
    expect(errors[1]).toMatch(new RegExp(`^api\\.yaml:6:${'    Typo: { directive: Pnig }'.indexOf('Pnig') + 1} `));
    expect(error).toContain('5 errors');
    await expectNotDeployed('several-errors');
  });

  it('reports a YAML syntax error with its line and deploys nothing', async () => {
    const yaml = [
      'key: broken-syntax', //                          1
      'endpoints:', //                                  2
      '  get /x:', //                                   3
      '    Ping: { directive: Ping', //                 4  unclosed flow map
      '',
    ].join('\n');
    const reply = await deploy({ 'api.yaml': yaml });
    expect(reply.status).toBe(400);
    const { errors } = reply.json();
    // The unclosed map is reported where the parser gives up on it: line 4, or the end of the file.
    expect(errors).toEqual([expect.stringMatching(/^api\.yaml:[45]:\d+ .*\}/)]);
    await expectNotDeployed('broken-syntax');
  });

  it('refuses a YAML tag outside the core schema at the tag, naming it, and deploys nothing', async () => {
    // yaml resolves !!timestamp (a Date) even with the core schema: `endpoints` was an object with no routes.
    const reply = await deploy({ 'api.yaml': 'key: tagged-date\nendpoints: !!timestamp 2001-12-14\n' });
    expect(reply.status).toBe(400);
    expect(reply.json().errors).toEqual([
      expect.stringMatching(/^api\.yaml:2:12 YAML tag !!timestamp is not allowed: only the core schema's tags/),
    ]);
    await expectNotDeployed('tagged-date');
  });

  it('refuses a local tag and a core tag that does not fit its value, each at its tag', async () => {
    const yaml = [
      'key: tagged-values', //                                                1
      'endpoints:', //                                                        2
      '  get /variant:', //                                                   3
      '    Reply: { directive: ModifyMessage, status: !!int abc }', //        4  stays "abc" with a warning
      '  get /other:', //                                                     5
      '    Reply: { directive: ModifyMessage, body: !secret { a: 1 } }', //   6  an unknown local tag
      '',
    ].join('\n');
    const column = (line: number, tag: string) => yaml.split('\n')[line - 1]!.indexOf(tag) + 1;
    const first = await deploy({ 'api.yaml': yaml });
    expect(first.status).toBe(400);
    expect(first.json().errors).toEqual([
      `api.yaml:4:${column(4, '!!int')} [get /variant › Reply] YAML tag !!int does not fit the value "abc": !!int is for integers`,
    ]);
    const second = await deploy({ 'api.yaml': yaml.replace('!!int abc', '!!int 201') });
    expect(second.status).toBe(400);
    expect(second.json().errors).toEqual([
      expect.stringContaining(
        `api.yaml:6:${column(6, '!secret')} [get /other › Reply] YAML tag !secret is not allowed`,
      ),
    ]);
    await expectNotDeployed('tagged-values');
    // The core schema's own tags still deploy.
    const core = await deploy({ 'api.yaml': yaml.replace('!!int abc', '!!int 201').replace('!secret', '!!map') });
    expect(core.status).toBe(201);
    expect((await anvil.admin('/tagged-values/variant')).status).toBe(201);
  });

  it('refuses Maps with invalid JSON, naming Maps/main.json:<line>:<col>', async () => {
    const json = ['{', '  "a": 1,', '  "b": ,', '  "c": 3', '}', ''].join('\n'); // error on line 3, col 8
    const reply = await deploy({ 'api.yaml': api('bad-map'), 'Maps/main.json': json });
    expect(reply.status).toBe(400);
    const { errors } = reply.json();
    expect(errors).toEqual([expect.stringMatching(/^Maps\/main\.json:3:8 invalid JSON/)]);
    await expectNotDeployed('bad-map');
  });

  it('an invalid redeploy leaves the current release serving', async () => {
    const good = await deploy({ 'api.yaml': api('stays', 'good') });
    expect(good.status).toBe(201);
    const bad = await deploy({ 'api.yaml': api('stays', 'bad') + '  get /broken:\n    Nope: { directive: Nope }\n' });
    expect(bad.status).toBe(400);
    expect(bad.json().errors).toEqual([
      expect.stringMatching(/^api\.yaml:6:\d+ \[get \/broken › Nope\] unknown directive "Nope"/),
    ]);
    const record = (await anvil.admin('/anvil/api/stays')).json();
    expect(record).toMatchObject({ release: good.json().release, releases: [] });
    expect((await anvil.admin('/stays/variant')).json()).toEqual({ variant: 'good' });
  });

  it('refuses an archive without api.yaml', async () => {
    const reply = await deploy({ 'Maps/main.json': '{}' });
    expect(reply.status).toBe(400);
    expect(reply.json().errors.join('\n')).toMatch(/api\.yaml/);
  });
});

describe('POST /anvil/api: hostile and malformed archives', () => {
  it('refuses ".." entries naming them, and writes nothing outside (or inside) the data dir', async () => {
    // The upload is unpacked under <data>/.anvil/tmp/upload-…: four levels up is the temp dir itself.
    const reply = await deploy([
      { path: 'api.yaml', content: api('escape') },
      { path: '../evil.js', content: 'globalThis.pwned = 1' },
      { path: '../../evil.js', content: 'globalThis.pwned = 2' },
      { path: '../../../evil.js', content: 'globalThis.pwned = 3' },
      { path: '../../../../evil.js', content: 'globalThis.pwned = 4' },
      { path: 'Assets/../../evil.js', content: 'globalThis.pwned = 5' },
    ]);
    expect(reply.status).toBe(400);
    const { errors } = reply.json();
    expect(errors).toContain('entry "../evil.js": path leaves the API folder');
    expect(errors.join('\n')).toContain('"../../../../evil.js"');
    expect(errors.join('\n')).toContain('"Assets/../../evil.js"');

    expect(fileNames(anvil.dataDir)).not.toContain('evil.js');
    const tempDir = dirname(anvil.dataDir);
    expect(existsSync(join(tempDir, 'evil.js'))).toBe(false);
    expect(existsSync(join(dirname(tempDir), 'evil.js'))).toBe(false);
    await expectNotDeployed('escape');
    // No upload leftovers either.
    expect(fileNames(join(anvil.dataDir, '.anvil', 'tmp'))).toEqual([]);
  });

  it('refuses an absolute path entry', async () => {
    const reply = await deploy([
      { path: 'api.yaml', content: api('absolute') },
      { path: '/tmp/anvil-absolute-evil.js', content: 'x' },
    ]);
    expect(reply.status).toBe(400);
    expect(reply.json().errors).toEqual([expect.stringContaining('"/tmp/anvil-absolute-evil.js"')]);
    expect(existsSync('/tmp/anvil-absolute-evil.js')).toBe(false);
    await expectNotDeployed('absolute');
  });

  it('refuses a symlink entry', async () => {
    const reply = await deploy([
      { path: 'api.yaml', content: api('symlinked') },
      { path: 'Assets/passwd', type: 'symlink', linkpath: '/etc/passwd' },
    ]);
    expect(reply.status).toBe(400);
    expect(reply.json().errors).toEqual(['entry "Assets/passwd": links are not allowed']);
    await expectNotDeployed('symlinked');
  });

  it('refuses a body that is not gzip with 400', async () => {
    const reply = await postRaw(Buffer.from('this is not an archive at all'));
    expect(reply.status).toBe(400);
    expect(reply.json().errors).toEqual([expect.stringMatching(/not gzip-compressed/)]);
  });

  it('refuses a wrong content-type with 415', async () => {
    const reply = await postRaw(tarGz({ 'api.yaml': api('plain-text') }), 'text/plain');
    expect(reply.status).toBe(415);
    expect(reply.json().error).toContain('"text/plain"');
    await expectNotDeployed('plain-text');
  });
});

describe('POST /anvil/api: upload limit', () => {
  let small: TestInstance;
  beforeAll(async () => {
    small = await startInstance({ args: ['--upload-limit', '64KiB'] });
  });
  afterAll(async () => small?.dispose());

  it('answers 413 to an archive over --upload-limit, and a small one still deploys', async () => {
    const archive = tarGz({ 'api.yaml': api('too-big'), 'Assets/noise.bin': randomBytes(128 * 1024) });
    expect(archive.length).toBeGreaterThan(64 * 1024);
    const reply = await postRaw(archive, 'application/gzip', small);
    expect(reply.status).toBe(413);
    expect(reply.json().errors).toEqual(['the upload is larger than 65536 bytes']);
    expect((await small.admin('/anvil/api/too-big')).status).toBe(404);

    const fits = await deploy({ 'api.yaml': api('fits') }, small);
    expect(fits.status).toBe(201);
    expect((await small.admin('/fits/variant')).json()).toEqual({ variant: 'one' });
  });
});
