import { Errors } from '../shared/errors.js';
import { pgBegin } from './database/postgres/pg-request.js';
import { beginTransaction } from './database/request-database.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'DatabaseBeginTransaction',
  localState: true,
  summary:
    "Begins a transaction on the API's database for this request: its statements are committed by DatabaseCommitTransaction, " +
    'and rolled back by DatabaseRollback, by a directive that fails, or when the pass ends with it open. One request at a time per thread: another waits its turn (up to 5 s, then 503).',
  failures: [
    { error: Errors.transactionAlreadyOpen, when: 'when the request already has a transaction open' },
    { error: Errors.transactionBusy, when: "when another request's transaction holds the database for more than 5 s" },
  ],
  params: noParams,
  async run(ctx) {
    if (ctx.api.database.mode === 'postgres') return pgBegin(ctx);
    await beginTransaction(ctx);
  },
});
