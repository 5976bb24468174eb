import type { DirectiveContext, RequestFacts } from '../engine/context.js';
import { renderError } from '../engine/render-error.js';
import { publicMessage } from '../errors.js';
import { prefersHtml } from '../views/accept.js';
import { builtinErrorPage } from '../views/error-page.js';
import { viewEngine } from '../views/load.js';
import { respondHtml } from '../views/respond.js';
import { defineDirective, noParams } from './types.js';

/**
 * The client's `accept` header, per request, once SetSmartError saw it in NORMAL_FLOW. Keyed by
 * the request's facts (one object per request, never shown to tenants).
 */
const acceptOf = new WeakMap<RequestFacts, string | null>();

/**
 * Content negotiation for errors (SPEC §7, §4).
 *
 * In ERROR_FLOW: a client whose `accept` prefers `text/html` (see src/views/accept.ts: a browser
 * does, `*\/*` and no header do not) gets `Assets/views/errors/<status>.liquid` rendered with
 * `{status, message}` — or, when that template is missing or fails (a limit, a syntax error), a
 * small built-in page with both escaped; any other client gets `{"error": message}` like OnError.
 * The status is the error's; `message` follows §4 (generic for a status ≥ 500 unless debug). Both
 * answers carry `vary: accept`.
 *
 * Which `accept`: the client's, never one a directive or an upstream set. In NORMAL_FLOW the
 * directive only records the client's header, so an API whose flow replaces headers (ModifyMessage
 * `headers`, Http) puts one SetSmartError in `before` (NORMAL_FLOW) and one in `after`
 * (ERROR_FLOW). Without that record it reads the message's `accept` only if no directive set it
 * (after `replaceHeaders` every header counts as set, so an upstream's headers are never taken
 * for the client's); otherwise it answers JSON.
 */
export default defineDirective({
  name: 'SetSmartError',
  summary: 'Errors as HTML (Assets/views/errors/<status>.liquid or a built-in page) for clients that prefer text/html, else as JSON.',
  params: noParams,
  async run(ctx) {
    if (ctx.error === null) {
      if (!acceptOf.has(ctx.request)) acceptOf.set(ctx.request, clientAccept(ctx));
      return;
    }
    const status = ctx.error.status;
    const accept = acceptOf.has(ctx.request) ? acceptOf.get(ctx.request) : clientAccept(ctx);
    addVary(ctx);
    if (!prefersHtml(accept)) {
      renderError(ctx, status, ctx.error.message, ctx.error.code);
      return;
    }
    const message = publicMessage(status, ctx.error.message, ctx.api.debug, ctx.error.code);
    ctx.message.status = status;
    respondHtml(ctx.message, await errorPage(ctx, status, message));
  },
});

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
  else if (!existing.split(',').some((v) => ['accept', '*'].includes(v.trim().toLowerCase()))) ctx.message.setHeader('vary', `${existing}, accept`);
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
