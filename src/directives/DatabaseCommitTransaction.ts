import { commitTransaction } from '../database/request-database.js';
import { defineDirective, noParams } from './types.js';

export default defineDirective({
  name: 'DatabaseCommitTransaction',
  summary: "Commits the request's transaction (500 when none is open; a failed commit rolls it back).",
  params: noParams,
  run(ctx) {
    commitTransaction(ctx);
  },
});
