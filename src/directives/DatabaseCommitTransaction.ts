import { Errors } from '../shared/errors.js';
import { pgEnd } from './database/postgres/pg-request.js';
import { commitTransaction } from './database/request-database.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'DatabaseCommitTransaction',
  localState: true,
  summary: "Commits the request's transaction (500 when none is open; a failed commit rolls it back).",
  failures: [{ error: Errors.transactionNotOpen, when: 'when the request has no transaction open' }],
  params: noParams,
  run(ctx) {
    if (ctx.api.database.mode === 'postgres') return pgEnd(ctx, 'commit');
    commitTransaction(ctx);
  },
});
