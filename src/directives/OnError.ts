import { renderError } from '../engine/render-error.js';
import { defineDirective, noParams } from './types.js';

export default defineDirective({
  name: 'OnError',
  summary: 'Renders {"error": <message>} with the status of the error being handled.',
  params: noParams,
  run(ctx) {
    if (ctx.error === null) return;
    renderError(ctx, ctx.error.status, ctx.error.message, ctx.error.code);
  },
});
