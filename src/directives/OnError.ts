import { renderFlowError } from '../engine/render-error.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'OnError',
  summary:
    'Renders {"error": <message>} with the status of the error being handled (or the rendering SetSmartError chose for the request).',
  params: noParams,
  async run(ctx) {
    if (ctx.error === null) return;
    await renderFlowError(ctx, ctx.error);
  },
});
