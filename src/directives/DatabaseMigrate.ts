import { apiDatabase } from './database/api-database.js';
import { pgReady } from './database/postgres/pg-request.js';
import { defineDirective, noParams } from '../engine/directive-types.js';

/** Kept so that the original's setup endpoints run unchanged (see docs/migrating.md). */
export default defineDirective({
  name: 'DatabaseMigrate',
  localState: true,
  summary:
    "The original's DatabaseMigrate: applies the release's pending migrations (Assets/db/*.sql, or Assets/sql/*.sql), each once; DatabaseConnect does the same on opening.",
  params: noParams,
  run(ctx) {
    if (ctx.api.database.mode === 'postgres') return pgReady(ctx);
    apiDatabase(ctx.api);
  },
});
