import { Errors } from '../errors.js';
import { commitTransaction } from '../database/request-database.js';
import { defineDirective, noParams } from './types.js';

export default defineDirective({
  name: 'DatabaseCommitTransaction',
  summary: "Commits the request's transaction (500 when none is open; a failed commit rolls it back).",
  failures: [
    { error: Errors.transactionNotOpen, when: 'when the request has no transaction open' },
  ],
  params: noParams,
  run(ctx) {
    commitTransaction(ctx);
  },
});
