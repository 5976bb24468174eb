import { publicMessage } from '../shared/errors.js';
import type { DirectiveContext, FlowError } from './context.js';

/** Renders `{"error": "<message>"}` with the error's status; messages of statuses >= 500 are generic unless debug (or a job: no client sees it) or a quota's. */
export function renderError(ctx: DirectiveContext, status: number, message: string, code?: string): void {
  ctx.message.respondJson(status, { error: publicMessage(status, message, ctx.api.debug || ctx.request.job, code) });
}

/** Renders the error being handled the way the request chose (ctx.errorRenderer), else as JSON. */
export async function renderFlowError(ctx: DirectiveContext, error: FlowError): Promise<void> {
  if (ctx.errorRenderer === null) renderError(ctx, error.status, error.message, error.code);
  else await ctx.errorRenderer(ctx, error);
}
