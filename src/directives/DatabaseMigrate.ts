import { apiDatabase } from '../database/api-database.js';
import { defineDirective, noParams } from './types.js';

/** Kept so that the original's setup endpoints run unchanged (see README "Moving an API from the original"). */
export default defineDirective({
  name: 'DatabaseMigrate',
  summary: "The original's DatabaseMigrate: applies the release's pending migrations (Assets/db/*.sql, or Assets/sql/*.sql), each once; DatabaseConnect does the same on opening.",
  params: noParams,
  run(ctx) {
    apiDatabase(ctx.api);
  },
});
