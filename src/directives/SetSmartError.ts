import type { DirectiveContext, FlowError, RequestFacts } from '../engine/context.js';
import { renderError } from '../engine/render-error.js';
import { publicMessage } from '../shared/errors.js';
import { prefersHtml } from './views/accept.js';
import { builtinErrorPage } from './views/error-page.js';
import { viewEngine } from './views/load.js';
import { respondHtml } from './views/respond.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

/**
 * The client's `accept` header, per request, once SetSmartError saw it in NORMAL_FLOW. Keyed by
 * the request's facts (one object per request, never shown to tenants).
 */
const acceptOf = new WeakMap<RequestFacts, string | null>();

/**
 * Content negotiation for errors (SPEC §7, §4).
 *
 * Rendering: a client whose `accept` prefers `text/html` (see src/directives/views/accept.ts: a browser
 * does, `*\/*` and no header do not) gets `Assets/views/errors/<status>.liquid` rendered with
 * `{status, message}` — or, when that template is missing or fails (a limit, a syntax error), a
 * small built-in page with both escaped; any other client gets `{"error": message}` like OnError.
 * The status is the error's; `message` follows §4 (generic for a status ≥ 500 unless debug). Both
 * answers carry `vary: accept`.
 *
 * In ERROR_FLOW it renders the error at once. In NORMAL_FLOW it sets the request's error rendering
 * (ctx.errorRenderer): OnError, or the runtime when no entry renders, then answers this way, so
 * SPEC's 404 page (SetSmartError before ThrowError, OnError in `after`) needs no second entry. It
 * also records the client's `accept` then, before ModifyMessage `headers` or Http replace it.
 * Without that record it reads the message's `accept` only if no directive set it (after
 * `replaceHeaders` every header counts as set, so an upstream's headers are never taken for the
 * client's); otherwise it answers JSON.
 */
export default defineDirective({
  name: 'SetSmartError',
  summary:
    "Errors as HTML (Assets/views/errors/<status>.liquid or a built-in page) for clients that prefer text/html, else as JSON; in NORMAL_FLOW it sets how OnError renders this request's errors.",
  params: noParams,
  async run(ctx) {
    if (ctx.error === null) {
      if (!acceptOf.has(ctx.request)) acceptOf.set(ctx.request, clientAccept(ctx));
      ctx.errorRenderer = renderSmartError;
      return;
    }
    await renderSmartError(ctx, ctx.error);
  },
});

async function renderSmartError(ctx: DirectiveContext, error: FlowError): Promise<void> {
  const status = error.status;
  const accept = acceptOf.has(ctx.request) ? acceptOf.get(ctx.request) : clientAccept(ctx);
  addVary(ctx);
  if (!prefersHtml(accept)) {
    renderError(ctx, status, error.message, error.code);
    return;
  }
  const message = publicMessage(status, error.message, ctx.api.debug || ctx.request.job, error.code);
  ctx.message.status = status;
  respondHtml(ctx.message, await errorPage(ctx, status, message));
}

/** The request's own `accept`, or null when a directive or an upstream has set the message's. */
function clientAccept(ctx: DirectiveContext): string | null {
  if (ctx.message.isResponseHeader('accept')) return null;
  const value = ctx.message.header('accept');
  return Array.isArray(value) ? value.join(', ') : value;
}

function addVary(ctx: DirectiveContext): void {
  const current = ctx.message.isResponseHeader('vary') ? ctx.message.header('vary') : null;
  const existing = (Array.isArray(current) ? current.join(', ') : (current ?? '')).trim();
  if (existing === '') ctx.message.setHeader('vary', 'accept');
  else if (!existing.split(',').some((v) => ['accept', '*'].includes(v.trim().toLowerCase())))
    ctx.message.setHeader('vary', `${existing}, accept`);
}

/** The tenant's errors/<status>.liquid, else (missing or failing) the built-in page. */
async function errorPage(ctx: DirectiveContext, status: number, message: string): Promise<string> {
  const name = `errors/${status}`;
  try {
    const engine = await viewEngine(ctx.api);
    if (engine.exists(name)) {
      const scope: Record<string, unknown> = Object.create(null);
      scope.status = status;
      scope.message = message;
      return await engine.session().render(name, scope);
    }
  } catch {
    // A broken error template must not hide the error: the built-in page says it.
  }
  return builtinErrorPage(status, message);
}
