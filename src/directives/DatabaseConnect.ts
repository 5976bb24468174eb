import { apiDatabase } from '../database/api-database.js';
import { defineDirective, noParams } from './types.js';

export default defineDirective({
  name: 'DatabaseConnect',
  summary: "Opens the API's SQLite database (<data>/<host>/<env>/<key>/db.sqlite, WAL) and applies pending migrations.",
  params: noParams,
  run(ctx) {
    apiDatabase(ctx.api);
  },
});
