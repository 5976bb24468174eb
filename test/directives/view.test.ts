import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

const fixtures = join(import.meta.dirname, '../fixtures/apis');
let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({ apis: { 'pages-view': join(fixtures, 'pages-view') } });
});
afterAll(async () => anvil?.dispose());

/** The fixture API runs with debug: true, so a 500 says which template and which limit. */
async function failure(path: string): Promise<string> {
  const reply = await anvil.request(path);
  expect(reply.status).toBe(500);
  expect(reply.headers['content-type']).toContain('application/json');
  return reply.json().error as string;
}

describe('View (SPEC §7)', () => {
  it('renders a page with its fragments, css/js URLs and data, as text/html', async () => {
    const reply = await anvil.request('/pages-view/page?title=Hello');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = reply.text;
    expect(html).toContain('<title>Hello</title>');
    // cssStaticFile / jsStaticFile: staticBasePath + css/<file>, in order.
    expect(html).toContain(
      '<link rel="stylesheet" href="/pages-view/static/css/site.css">\n<link rel="stylesheet" href="/pages-view/static/css/print/print.css">',
    );
    expect(html).toContain('<script src="/pages-view/static/js/app.js"></script>');
    // Fragments, rendered first with the same data, inserted as HTML; a name with a slash too.
    expect(html).toContain('<header><h1>Hello</h1></header>');
    expect(html).toContain('<nav><a href="#one">one</a><a href="#two">two</a><a href="#three">three</a></nav>');
    // A fragment sees the variables and the fragments before it.
    expect(html).toContain('<footer>2 css, 1 js, after 32 chars of header</footer>');
    expect(html).toContain('<ul><li>one</li><li>two</li><li>three</li></ul>');
    expect(html).toContain('<p id="user">Ann &lt;admin&gt; (reader, writer)</p>');
    expect(html).toContain('<p id="memory">Hello</p>');
    expect(html).toContain('<span class="badge">Hello</span>');
    expect(html).toContain('<p id="raw"><i>raw</i></p>');
  });

  it('escapes data (also inside fragments and includes) but not the fragments themselves', async () => {
    const title = '<script>alert("x")</script>';
    const reply = await anvil.request(`/pages-view/page?title=${encodeURIComponent(title)}`);
    expect(reply.status).toBe(200);
    const html = reply.text;
    const escaped = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;';
    expect(html).not.toContain('<script>alert');
    expect(html).toContain(`<title>${escaped}</title>`);
    expect(html).toContain(`<header><h1>${escaped}</h1></header>`);
    expect(html).toContain(`<span class="badge">${escaped}</span>`);
    // `| escape` is not escaped a second time.
    expect(html).toContain(`<p id="escaped-once">${escaped}</p>`);
    // A fragment piped through a filter is plain text again, and escaped.
    expect(html).toMatch(/<p id="upcased">\d+<\/p>/);
  });

  it('keeps a status set before it', async () => {
    const reply = await anvil.request('/pages-view/created');
    expect(reply.status).toBe(201);
    expect(reply.text).toBe('plain page');
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('answers 500 naming a missing template or fragment', async () => {
    expect(await failure('/pages-view/missing')).toContain('template Assets/views/nowhere.liquid not found');
    expect(await failure('/pages-view/missing-fragment')).toContain(
      'template Assets/views/fragments/nowhere.liquid not found',
    );
  });

  it('refuses names that could leave Assets/views (500)', async () => {
    for (const name of ['../api', '../../../../etc/passwd', '/etc/passwd', 'a/../../api', '.hidden', 'a\\b']) {
      const message = await failure(`/pages-view/by-name?name=${encodeURIComponent(name)}`);
      expect(message, name).toMatch(/"name".*must match pattern/);
    }
    expect(await failure('/pages-view/fragment-by-name?name=..%2Fpage')).toMatch(/fragments\.0.*must match pattern/);
    expect((await anvil.request('/pages-view/by-name?name=plain')).text).toBe('plain page');
  });

  it('refuses include/render/layout paths out of Assets/views, literal or from data', async () => {
    for (const name of ['escape-include', 'escape-render', 'escape-layout']) {
      const message = await failure(`/pages-view/include?name=${name}`);
      expect(message).toContain(`Assets/views/${name}.liquid`);
      expect(message).toMatch(/no template ".+" under Assets\/views, file:escape-\w+\.liquid, line:1/);
      expect(message).not.toContain('root:');
    }
    for (const target of ['../../../../../etc/passwd', '/etc/passwd', '../api', 'fragments/../../api']) {
      const message = await failure(`/pages-view/include?name=escape-dynamic&target=${encodeURIComponent(target)}`);
      expect(message).toContain(`no template "${target}" under Assets/views`);
    }
    // A dynamic include of an allowed name works.
    const ok = await anvil.request('/pages-view/include?name=escape-dynamic&target=plain');
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('beforeplain pageafter\n');
  });

  it('cuts off a runaway loop with a 500 naming the limit, and keeps serving', async () => {
    // (1..100000000) asks liquidjs for 1e8 elements: refused by its allocation counter at once.
    expect(await failure('/pages-view/loop')).toContain('memory limit exceeded');
    // Nested loops allocate little but never end: the render clock stops them.
    const started = Date.now();
    const [message, duringLoop] = await Promise.all([
      failure('/pages-view/nested-loop'),
      anvil.request('/pages-view/ping'),
    ]);
    expect(message).toContain('render time limit exceeded (1000 ms)');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(duringLoop.status).toBe(200);
    expect(await failure('/pages-view/capture-bomb')).toMatch(/limit exceeded/);
    const pong = await anvil.request('/pages-view/ping');
    expect(pong.status).toBe(200);
    expect(pong.json()).toEqual({ message: 'pong' });
    expect((await anvil.request('/pages-view/page?title=after')).status).toBe(200);
  });

  it('bounds the output size and the nesting of includes', async () => {
    expect(await failure('/pages-view/big-output')).toContain('output limit exceeded (a page may be 5 MiB)');
    expect(await failure('/pages-view/recursion')).toContain('nesting limit exceeded');
  });

  it('reports a template syntax error as a 500 naming the template', async () => {
    expect(await failure('/pages-view/syntax')).toContain('Assets/views/syntax.liquid');
  });

  it('serves many requests from the per-thread template cache', async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => anvil.request(`/pages-view/page?title=t${i}`)),
    );
    replies.forEach((reply, i) => {
      expect(reply.status).toBe(200);
      expect(reply.text).toContain(`<title>t${i}</title>`);
    });
  });
});
