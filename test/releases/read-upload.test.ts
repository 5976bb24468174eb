import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NO_FILE_FIELD_ERROR, unpackUpload } from '../../src/deploy/releases/read-upload.js';
import { defaultUnpackLimits, type UnpackLimits } from '../../src/deploy/releases/unpack.js';
import { API_YAML, tarGz } from '../helpers/tarball.js';

let base: string;
let server: http.Server;
let url: string;
let limits: UnpackLimits = defaultUnpackLimits;
let uploads = 0;
let lastDest = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    lastDest = path.join(base, `upload-${++uploads}`);
    const dest = lastDest;
    unpackUpload(req, dest, limits).then(
      async (result) => {
        const body = result.ok
          ? {
              root: path.relative(dest, result.root),
              files: result.files,
              bytes: result.bytes,
              tree: await readdir(result.root),
            }
          : { errors: result.errors };
        res.writeHead(result.ok ? 201 : result.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      },
      (err: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ errors: [String(err)] }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/anvil/api`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'anvil-upload-'));
  limits = defaultUnpackLimits;
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: { root?: string; files?: number; bytes?: number; tree?: string[]; errors?: string[] };
}

async function post(payload: Buffer | FormData | Readable, headers: Record<string, string> = {}): Promise<Answer> {
  let body: Buffer | Readable;
  if (payload instanceof FormData) {
    // Encode the (global) FormData the way fetch would: multipart body + boundary header.
    const encoded = new Response(payload);
    body = Buffer.from(await encoded.arrayBuffer());
    headers = { 'content-type': encoded.headers.get('content-type') ?? '', ...headers };
  } else {
    body = payload;
  }
  const res = await request(url, { method: 'POST', headers, body });
  return { status: res.statusCode, body: (await res.body.json()) as Answer['body'] };
}

function form(fields: [string, string | { data: Buffer; filename: string }][]): FormData {
  const fd = new FormData();
  for (const [name, value] of fields) {
    if (typeof value === 'string') fd.append(name, value);
    else fd.append(name, new Blob([value.data], { type: 'application/gzip' }), value.filename);
  }
  return fd;
}

const archive = (): Buffer => tarGz({ 'api.yaml': API_YAML, 'Maps/main.json': '{"ok":true}' });

describe('unpackUpload: raw body', () => {
  it('unpacks an application/gzip body', async () => {
    const answer = await post(archive(), { 'content-type': 'application/gzip' });
    expect(answer).toEqual({
      status: 201,
      body: { root: '', files: 2, bytes: Buffer.byteLength(API_YAML) + 11, tree: ['Maps', 'api.yaml'] },
    });
    expect(await readFile(path.join(lastDest, 'Maps/main.json'), 'utf8')).toBe('{"ok":true}');
  });

  it.each([
    'application/x-gzip',
    'application/x-tar+gzip',
    'application/octet-stream',
    'Application/GZIP; charset=binary',
  ])('accepts content-type %s', async (type) => {
    expect((await post(archive(), { 'content-type': type })).status).toBe(201);
  });

  it('accepts a body without content-type', async () => {
    expect((await post(archive())).status).toBe(201);
  });

  it('accepts a chunked body (no content-length)', async () => {
    const data = tarGz({ 'myapi/api.yaml': API_YAML, 'myapi/Assets/big.bin': randomBytes(300 * 1024) });
    const chunks = [data.subarray(0, 1000), data.subarray(1000, 100_000), data.subarray(100_000)];
    const answer = await post(Readable.from(chunks), { 'content-type': 'application/gzip' });
    expect(answer.status).toBe(201);
    expect(answer.body.root).toBe('myapi');
  });

  it('answers 400 naming the hostile entry', async () => {
    const answer = await post(tarGz({ 'api.yaml': API_YAML, '../evil.js': 'x' }), {
      'content-type': 'application/gzip',
    });
    expect(answer).toEqual({ status: 400, body: { errors: ['entry "../evil.js": path leaves the API folder'] } });
    expect(existsSync(lastDest)).toBe(false);
    expect(existsSync(path.join(base, 'evil.js'))).toBe(false);
  });

  it('answers 400 to a body that is not gzip', async () => {
    const answer = await post(Buffer.from('{"not":"an archive"}'), { 'content-type': 'application/octet-stream' });
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]).toMatch(/not gzip-compressed/);
  });
});

describe('unpackUpload: multipart/form-data', () => {
  it('unpacks the "file" field and ignores the other fields', async () => {
    const data = tarGz({ 'myapi/': '', 'myapi/api.yaml': API_YAML });
    const answer = await post(
      form([
        ['comment', 'first release'],
        ['attachment', { data: randomBytes(2048), filename: 'other.bin' }],
        ['file', { data, filename: 'myapi.tar.gz' }],
        ['after', 'ignored too'],
      ]),
    );
    expect(answer).toEqual({
      status: 201,
      body: { root: 'myapi', files: 1, bytes: Buffer.byteLength(API_YAML), tree: ['api.yaml'] },
    });
  });

  it('answers 400 when there is no "file" field', async () => {
    const answer = await post(
      form([
        ['archive', { data: archive(), filename: 'x.tgz' }],
        ['file', 'not a file part'],
      ]),
    );
    expect(answer).toEqual({ status: 400, body: { errors: [NO_FILE_FIELD_ERROR] } });
    expect(existsSync(lastDest)).toBe(false);
  });

  it('answers 400 naming the hostile entry', async () => {
    const data = tarGz([
      { path: 'api.yaml', content: API_YAML },
      { path: 'Assets/link', type: 'symlink', linkpath: '/etc' },
    ]);
    const answer = await post(form([['file', { data, filename: 'x.tgz' }]]));
    expect(answer).toEqual({ status: 400, body: { errors: ['entry "Assets/link": links are not allowed'] } });
    expect(existsSync(lastDest)).toBe(false);
  });

  it('answers 413 when the file is over the limit', async () => {
    limits = { ...defaultUnpackLimits, maxUploadBytes: 16 * 1024 };
    const data = tarGz({ 'api.yaml': API_YAML, 'noise.bin': randomBytes(64 * 1024) });
    const answer = await post(form([['file', { data, filename: 'x.tgz' }]]));
    expect(answer).toEqual({ status: 413, body: { errors: ['the upload is larger than 16384 bytes'] } });
    expect(existsSync(lastDest)).toBe(false);
  });

  it('answers 400 to a malformed multipart body', async () => {
    const answer = await post(Buffer.from('--nope\r\n\r\n'), { 'content-type': 'multipart/form-data; boundary=xyz' });
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]).toMatch(/^the multipart upload is malformed/);
    const noBoundary = await post(Buffer.from('x'), { 'content-type': 'multipart/form-data' });
    expect(noBoundary.status).toBe(400);
  });
});

describe('unpackUpload: refusals before reading', () => {
  it.each(['text/plain', 'application/json', 'application/zip', 'application/x-www-form-urlencoded'])(
    'answers 415 to content-type %s',
    async (type) => {
      const answer = await post(archive(), { 'content-type': type });
      expect(answer.status).toBe(415);
      expect(answer.body.errors?.[0]).toContain(`content type "${type}" is not supported`);
      expect(existsSync(lastDest)).toBe(false);
    },
  );

  it('answers 415 to a content-encoding', async () => {
    const answer = await post(archive(), { 'content-type': 'application/gzip', 'content-encoding': 'gzip' });
    expect(answer.status).toBe(415);
  });

  it('answers 413 to a content-length over the limit without unpacking, and the connection stays usable', async () => {
    const body = tarGz({ 'api.yaml': API_YAML, 'noise.bin': randomBytes(24 * 1024) });
    limits = { ...defaultUnpackLimits, maxUploadBytes: body.length - 1 };
    const answer = await post(body, { 'content-type': 'application/gzip' });
    expect(answer).toEqual({ status: 413, body: { errors: [`the upload is larger than ${body.length - 1} bytes`] } });
    expect(existsSync(lastDest)).toBe(false); // unpackTarGz never ran
    limits = defaultUnpackLimits;
    expect((await post(archive(), { 'content-type': 'application/gzip' })).status).toBe(201);
  });

  it('answers 413 to a chunked body that grows over the limit (bytes counted as they stream)', async () => {
    limits = { ...defaultUnpackLimits, maxUploadBytes: 16 * 1024 };
    const data = tarGz({ 'api.yaml': API_YAML, 'noise.bin': randomBytes(24 * 1024) });
    const chunks = [];
    for (let i = 0; i < data.length; i += 4096) chunks.push(data.subarray(i, i + 4096));
    const answer = await post(Readable.from(chunks), { 'content-type': 'application/gzip' });
    expect(answer).toEqual({ status: 413, body: { errors: ['the upload is larger than 16384 bytes'] } });
    expect(existsSync(lastDest)).toBe(false);
  });

  it('does not hang on a client that keeps sending far beyond the limit', async () => {
    limits = { ...defaultUnpackLimits, maxUploadBytes: 16 * 1024 };
    async function* endless(): AsyncGenerator<Buffer> {
      yield tarGz({ 'api.yaml': API_YAML, 'noise.bin': randomBytes(64 * 1024) }); // valid, over the limit
      for (let i = 0; i < 4096; i++) yield randomBytes(16 * 1024); // then 64 MiB more
    }
    const outcome = await post(Readable.from(endless()), { 'content-type': 'application/gzip' }).then(
      (answer) => answer.status,
      (err: Error) => err.name,
    );
    // Either the 413 arrived, or the connection was cut once the drain budget was spent.
    expect([413, 'SocketError', 'Error']).toContain(outcome);
    expect(existsSync(lastDest)).toBe(false);
  });
});
