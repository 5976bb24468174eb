import { apiDatabase } from '../database/api-database.js';
import { defineDirective, noParams } from './types.js';

/** Kept so that the original's setup endpoints run unchanged (see README "Moving an API from the original"). */
export default defineDirective({
  name: 'DatabaseCreate',
  summary: "The original's DatabaseCreate: the API's SQLite database is created when first opened, so this opens it (and applies pending migrations) like DatabaseConnect.",
  params: noParams,
  run(ctx) {
    apiDatabase(ctx.api);
  },
});
