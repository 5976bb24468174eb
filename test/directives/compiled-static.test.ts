import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { compiledApi } from '../helpers/compiled-static-api.js';
import type { ApiFiles } from '../helpers/instance.js';

// StaticNameGenerator + ServeCompiledStatic (ORIGINAL.md, flaw 13 fixed: the `r` of the URL must
// be the release that serves it, so no other release and no other API can be read), and CacheUrl,
// in-process (helpers/in-process-apis.ts); a redeploy's URLs are test/http/default-options.test.ts's.

const otherApi: ApiFiles = {
  'api.yaml': `key: other
endpoints:
  get /static/css:
    Serve: { directive: ServeCompiledStatic, extension: css }
  get /release:
    Names: { directive: StaticNameGenerator, type: css, files: [site.css] }
    Reply: { directive: ModifyMessage, body: { css: $.memory.cssStaticFile } }
`,
  'Assets/css/site.css': 'body { color: other; }',
};

let anvil: InProcessApis;
beforeAll(async () => {
  anvil = await startInProcess({ apis: { compiled: compiledApi('red'), other: otherApi } });
});
afterAll(async () => anvil?.dispose());

async function page(): Promise<{ css: string; js: string }> {
  const reply = await anvil.request('/compiled/page');
  expect(reply.status).toBe(200);
  return reply.json();
}

describe('StaticNameGenerator', () => {
  it('names the files of this release in one URL per type', async () => {
    const { css, js } = await page();
    const release = /\?r=([^&]+)&/.exec(css)![1]!;
    expect(release).toMatch(/^r-/);
    expect(css).toBe(`/compiled/static/css?r=${release}&f=site.css,theme`);
    expect(js).toBe(`/compiled/static/js?r=${release}&f=vendor/lib.js,app`);
  });
});

describe('ServeCompiledStatic', () => {
  it('serves the listed files of Assets/<extension>/ joined, with the content type', async () => {
    const { css, js } = await page();
    const styles = await anvil.request(css);
    expect(styles.status).toBe(200);
    expect(styles.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(styles.headers['x-content-type-options']).toBe('nosniff');
    expect(styles.text).toBe('body { color: red; }\n.theme { margin: 0; }');
    const script = await anvil.request(js);
    expect([script.status, script.headers['content-type'], script.text]).toEqual([
      200,
      'application/javascript',
      'lib();\napp();',
    ]);
  });

  it('answers 400 without r or f', async () => {
    const { css } = await page();
    const release = /\?r=([^&]+)&/.exec(css)![1]!;
    for (const query of ['', `?r=${release}`, '?f=site.css', `?r=${release}&f=`]) {
      const reply = await anvil.request(`/compiled/static/css${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.json().error, query).toContain('r (the release) and f (the files');
    }
  });

  it("never reads another API's release, nor a name that leaves the folder (404)", async () => {
    const { css } = await page();
    const mine = /\?r=([^&]+)&/.exec(css)![1]!;
    const theirs = /\?r=([^&]+)&/.exec((await anvil.request('/other/release')).json().css)![1]!;
    expect(theirs).not.toBe(mine);
    const paths = [
      `/compiled/static/css?r=${theirs}&f=site.css`,
      `/other/static/css?r=${mine}&f=site.css`,
      `/compiled/static/css?r=${mine}&f=../secret.txt`,
      `/compiled/static/css?r=${mine}&f=..%2Fsecret.txt`,
      `/compiled/static/css?r=${mine}&f=%2Fetc%2Fpasswd`,
      `/compiled/static/css?r=${mine}&f=site.css,missing.css`,
      `/compiled/static/css?r=${encodeURIComponent(`../../other/${theirs}`)}&f=site.css`,
    ];
    for (const path of paths) {
      const reply = await anvil.request(path);
      expect(reply.status, path).toBe(404);
    }
    expect((await anvil.request(`/other/static/css?r=${theirs}&f=site.css`)).text).toBe('body { color: other; }');
  });
});

describe('CacheUrl', () => {
  it('marks any answer public for expirationMinutes (default 5), with expires', async () => {
    for (const [path, seconds] of [
      ['/compiled/cached', 600],
      ['/compiled/cached-default', 300],
    ] as const) {
      const reply = await anvil.request(path);
      expect(reply.status).toBe(200);
      expect(reply.headers['cache-control']).toBe(`public, max-age=${seconds}`);
      const expires = Date.parse(String(reply.headers['expires']));
      expect(Math.abs(expires - (Date.now() + seconds * 1000))).toBeLessThan(5_000);
    }
  });
});
