import { pgEnd } from './database/postgres/pg-request.js';
import { rollbackTransaction } from './database/request-database.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'DatabaseRollback',
  localState: true,
  summary:
    "Rolls back the request's transaction; does nothing when none is open (one rolled back after an error, say).",
  params: noParams,
  run(ctx) {
    if (ctx.api.database.mode === 'postgres') return pgEnd(ctx, 'rollback');
    rollbackTransaction(ctx);
  },
});
