import { apiDatabase } from './database/api-database.js';
import { pgReady } from './database/postgres/pg-request.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

/** Kept so that the original's setup endpoints run unchanged (see docs/migrating.md). */
export default defineDirective({
  name: 'DatabaseCreate',
  localState: true,
  summary:
    "The original's DatabaseCreate: the API's SQLite database is created when first opened, so this opens it (and applies pending migrations) like DatabaseConnect.",
  params: noParams,
  run(ctx) {
    if (ctx.api.database.mode === 'postgres') return pgReady(ctx);
    apiDatabase(ctx.api);
  },
});
