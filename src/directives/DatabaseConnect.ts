import { apiDatabase } from './database/api-database.js';
import { pgReady } from './database/postgres/pg-request.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

export default defineDirective({
  name: 'DatabaseConnect',
  localState: true,
  summary:
    "Opens the API's database (SQLite: <data>/<host>/<env>/<key>/db.sqlite, WAL; with database: postgres its schema, made at first use) and applies pending migrations.",
  params: noParams,
  run(ctx) {
    if (ctx.api.database.mode === 'postgres') return pgReady(ctx);
    apiDatabase(ctx.api);
  },
});
