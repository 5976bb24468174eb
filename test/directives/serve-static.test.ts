import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

// In-process (helpers/in-process-apis.ts); how the router sends a file's bytes, and HEAD, is
// test/http/response-buffer.test.ts's.

const fixture = join(import.meta.dirname, '../fixtures/apis/serve-static');
let anvil: InProcessApis;
/** The deployed release's Assets/ folder and the API's storage folder (ServeStatic storage: true). */
let assets: string;
let dataDir: string;
let storage: string;

beforeAll(async () => {
  anvil = await startInProcess({ apis: { 'serve-static': fixture } });
  expect((await anvil.request('/serve-static/ping')).status).toBe(200);
  assets = join(anvil.releaseDir('serve-static'), 'Assets');
  dataDir = join(anvil.dataDir, 'localhost/dev/serve-static');
  storage = join(dataDir, 'storage');
  mkdirSync(join(storage, 'public'), { recursive: true });

  // Links a tenant might smuggle in (a release never holds links; the data dir might).
  symlinkSync('/etc/passwd', join(assets, 'css/evil.css'));
  symlinkSync('../../api.yaml', join(assets, 'css/up.css'));
  symlinkSync('site.css', join(assets, 'css/alias.css'));
  symlinkSync('/etc', join(assets, 'etc-link'));
  writeFileSync(join(assets, 'files', 'say "hi".txt'), 'quoted\n');
  writeFileSync(join(assets, 'files', 'résumé.txt'), 'accents\n');

  writeFileSync(join(storage, 'public/hello.txt'), 'hello from storage\n');
  writeFileSync(
    join(storage, 'public/pixel.png'),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10, 0x80]),
  );
  writeFileSync(join(dataDir, 'outside.txt'), 'the data dir itself is not served\n');
  symlinkSync(join(dataDir, 'outside.txt'), join(storage, 'public/outside-link.txt'));
  symlinkSync('../../outside.txt', join(storage, 'public/relative-link.txt'));
  symlinkSync('hello.txt', join(storage, 'public/hello-link.txt'));
  writeFileSync(join(storage, 'public/huge.bin'), '');
  truncateSync(join(storage, 'public/huge.bin'), 11 * 1024 * 1024);
  execFileSync('mkfifo', [join(storage, 'public/fifo.txt')]);
});
afterAll(async () => anvil?.dispose());

async function expectNotFound(path: string): Promise<void> {
  const reply = await anvil.request(path);
  expect(reply.status, path).toBe(404);
  expect(reply.json(), path).toEqual({ error: 'Not Found' });
}

describe('ServeStatic (SPEC §7)', () => {
  it('serves a css file with its content type', async () => {
    const reply = await anvil.request('/serve-static/static/css/site.css');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(reply.headers['x-content-type-options']).toBe('nosniff');
    expect(reply.headers['content-disposition']).toBeUndefined();
    expect(reply.text).toBe(readFileSync(join(fixture, 'Assets/css/site.css'), 'utf8'));
  });

  it('picks the content type from the extension, or from `type`', async () => {
    const cases: Array<[string, string]> = [
      ['/serve-static/static/js/app.js', 'text/javascript; charset=utf-8'],
      ['/serve-static/static/images/dot.svg', 'image/svg+xml; charset=utf-8'],
      ['/serve-static/top/robots.txt', 'text/plain; charset=utf-8'],
      ['/serve-static/download/data.bin', 'application/octet-stream'],
      ['/serve-static/typed/data.bin', 'text/plain; charset=utf-8'],
      ['/serve-static/typed-ext/data.bin', 'application/json; charset=utf-8'],
      ['/serve-static/storage/pixel.png', 'image/png'],
    ];
    for (const [path, type] of cases) {
      const reply = await anvil.request(path);
      expect(reply.status, path).toBe(200);
      expect(reply.headers['content-type'], path).toBe(type);
    }
  });

  it('adds an escaped content-disposition with attachment: true', async () => {
    const plain = await anvil.request('/serve-static/download/report.txt');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-disposition']).toBe('attachment; filename="report.txt"');
    expect(plain.text).toBe('a report\n');
    const quoted = await anvil.request(`/serve-static/download/${encodeURIComponent('say "hi".txt')}`);
    expect(quoted.status).toBe(200);
    expect(quoted.headers['content-disposition']).toBe('attachment; filename="say \\"hi\\".txt"');
    const accents = await anvil.request(`/serve-static/download/${encodeURIComponent('résumé.txt')}`);
    expect(accents.status).toBe(200);
    expect(accents.headers['content-disposition']).toBe(
      `attachment; filename="r_sum_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt`,
    );
  });

  it('answers 404 {"error":"Not Found"} for a missing file, a folder or a file outside Assets', async () => {
    await expectNotFound('/serve-static/static/css/nope.css');
    await expectNotFound('/serve-static/top/css');
    await expectNotFound('/serve-static/top/api.yaml');
    await expectNotFound('/serve-static/storage/nope.txt');
  });

  it('refuses every path that would leave its root with a 404', async () => {
    const attempts = [
      '/serve-static/static/css/..%2f..%2fapi.yaml',
      '/serve-static/static/css/%2e%2e%2f%2e%2e%2fapi.yaml',
      '/serve-static/static/css/%2e%2e',
      '/serve-static/static/css/%2E%2E%2Fjs%2Fapp.js',
      '/serve-static/static/css/..',
      '/serve-static/static/css/../../api.yaml',
      '/serve-static/top/%2Fetc%2Fpasswd',
      '/serve-static/top/%2e',
      '/serve-static/static/css/site.css%00.png',
      '/serve-static/static/css/..%5C..%5Capi.yaml',
      '/serve-static/static/css/%5Cetc%5Cpasswd',
      '/serve-static/browse?dir=..&file=api.yaml',
      '/serve-static/browse?dir=css/../..&file=api.yaml',
      '/serve-static/browse?dir=/etc&file=passwd',
      '/serve-static/browse?dir=css&file=../../api.yaml',
      '/serve-static/browse?dir=css&file=%00',
      '/serve-static/browse?dir=C:/Windows&file=win.ini',
      '/serve-static/storage-browse?dir=..&file=outside.txt',
      '/serve-static/storage-browse?dir=&file=..',
      '/serve-static/storage/..%2foutside.txt',
    ];
    for (const path of attempts) {
      const reply = await anvil.request(path);
      expect(reply.status, path).toBe(404);
      expect(reply.text, path).not.toContain('root:');
      expect(reply.text, path).not.toContain('key: serve-static');
    }
    // The same routes serve what is inside.
    expect((await anvil.request('/serve-static/browse?dir=css&file=site.css')).status).toBe(200);
    expect((await anvil.request('/serve-static/browse?dir=images/&file=dot.svg')).status).toBe(200);
  });

  it('refuses links whose target is outside the root, and follows those that stay inside', async () => {
    await expectNotFound('/serve-static/static/css/evil.css');
    await expectNotFound('/serve-static/static/css/up.css');
    await expectNotFound('/serve-static/browse?dir=etc-link&file=passwd');
    await expectNotFound('/serve-static/storage/outside-link.txt');
    await expectNotFound('/serve-static/storage/relative-link.txt');
    const alias = await anvil.request('/serve-static/static/css/alias.css');
    expect(alias.status).toBe(200);
    expect(alias.text).toBe('body { color: #333; }\n');
    const inside = await anvil.request('/serve-static/storage/hello-link.txt');
    expect(inside.status).toBe(200);
    expect(inside.text).toBe('hello from storage\n');
  });

  it('serves the storage folder of the data dir with storage: true', async () => {
    const reply = await anvil.request('/serve-static/storage/hello.txt');
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('hello from storage\n');
    // The data dir itself (database, logs) is not the root.
    await expectNotFound('/serve-static/storage-browse?dir=&file=outside.txt');
  });

  it('answers 500 for a file over 10 MiB and 404 (without hanging) for a FIFO', async () => {
    const huge = await anvil.request('/serve-static/storage/huge.bin');
    expect(huge.status).toBe(500);
    expect(huge.json()).toEqual({ error: 'Internal Server Error' });
    const started = Date.now();
    await expectNotFound('/serve-static/storage/fifo.txt');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await anvil.request('/serve-static/ping')).status).toBe(200);
  });
});
