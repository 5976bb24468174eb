import { Errors } from '../shared/errors.js';
import { SafeHtml } from './views/html.js';
import { viewEngine } from './views/load.js';
import { respondHtml } from './views/respond.js';
import { ASSET_NAME_PATTERN, assetNameProblem } from './views/names.js';
import { defineDirective } from '../engine/directive-types.js';

const assetName = { type: 'string', minLength: 1, maxLength: 255, pattern: ASSET_NAME_PATTERN } as const;
const assetNames = { type: 'array', items: assetName, maxItems: 100 } as const;

/**
 * Renders `Assets/views/<name>.liquid` (SPEC §7). The template's variables:
 *
 * - every key of `data` (aliases already resolved);
 * - `cssStaticFile` / `jsStaticFile`: lists of URL strings, `staticBasePath` + `css/<file>` (or
 *   `js/<file>`) for each entry of `css` / `js`, in order — `staticBasePath: /shop/static`,
 *   `css: [site.css]` gives `["/shop/static/css/site.css"]`, so a template writes
 *   `{% for f in cssStaticFile %}<link rel="stylesheet" href="{{ f }}">{% endfor %}`;
 * - one variable per fragment, named as listed (`header`; `{{ ["nav/top"] }}` for a name with a
 *   slash): `Assets/views/fragments/<f>.liquid` rendered first, in order, with the same variables
 *   (so a fragment also sees the fragments before it), and inserted unescaped.
 *
 * The View's own variables win over keys of `data` of the same name. `{{ … }}` output is
 * HTML-escaped unless it is a fragment, went through `| escape`, or ends in `| raw`. The message
 * keeps its status (200 unless an earlier directive set one) and gets `content-type: text/html;
 * charset=utf-8` and the page as its body. Any failure — a bad or missing name, a template error,
 * a limit (render time, allocations, page size: src/directives/views/limits.ts) — is a 500 naming the template
 * and the limit.
 */
export default defineDirective({
  name: 'View',
  summary: 'Renders Assets/views/<name>.liquid with `data`, the fragments and the css/js URLs, as text/html.',
  example: { name: 'home', css: ['site.css'] },
  params: {
    type: 'object',
    properties: {
      name: assetName,
      staticBasePath: { type: 'string', maxLength: 2048, default: '/' },
      css: assetNames,
      js: assetNames,
      fragments: assetNames,
      data: { type: ['object', 'null'] },
    },
    required: ['name'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const { name } = params;
    const css = params.css ?? [];
    const js = params.js ?? [];
    const fragments = params.fragments ?? [];
    checkName('template', name);
    for (const f of fragments) checkName('fragment', f);
    for (const f of css) checkName('css file', f);
    for (const f of js) checkName('js file', f);

    const engine = await viewEngine(ctx.api);
    const session = engine.session();
    const base = params.staticBasePath ?? '/';
    const scope: Record<string, unknown> = Object.create(null);
    if (params.data !== null && params.data !== undefined) Object.assign(scope, params.data);
    scope.cssStaticFile = css.map((f) => staticUrl(base, 'css', f));
    scope.jsStaticFile = js.map((f) => staticUrl(base, 'js', f));
    // A failing render throws ANVIL_ERR_VIEW (`View: …`) itself.
    for (const fragment of fragments)
      scope[fragment] = new SafeHtml(await session.render(`fragments/${fragment}`, scope));
    const html = await session.render(name, scope);
    respondHtml(ctx.message, html);
  },
});

function checkName(what: string, name: string): void {
  const problem = assetNameProblem(name);
  if (problem !== null) throw Errors.viewBadName(what, String(name).slice(0, 100), problem);
}

/** `staticBasePath` + `<folder>/<file>`, with exactly one `/` between the base and the folder. */
function staticUrl(base: string, folder: 'css' | 'js', file: string): string {
  return `${base.endsWith('/') ? base : `${base}/`}${folder}/${file}`;
}
