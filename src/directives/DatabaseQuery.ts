import { DATABASE_LIMITS } from './database/api-database.js';
import { pgStatement } from './database/postgres/pg-request.js';
import { withStatementDatabase } from './database/request-database.js';
import { Errors } from '../shared/errors.js';
import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'DatabaseQuery',
  localState: true,
  summary:
    "Runs one parameterised statement against the API's own database (opening it and applying migrations if need be; in the request's transaction when one is open); " +
    'mode all: the rows, get: the first row or null, run: {changes, lastInsertRowid}; the result goes to memory `target`.',
  example: {
    sql: 'SELECT id, name FROM users WHERE id = ?',
    params: ['$.message.pathParam.id'],
    mode: 'get',
    target: 'user',
  },
  memory: { writes: ['<target>'] },
  params: {
    type: 'object',
    properties: {
      sql: { type: 'string', minLength: 1, maxLength: DATABASE_LIMITS.maxSqlBytes },
      params: { type: ['array', 'object', 'null'] },
      target: { type: 'string', minLength: 1 },
      mode: { enum: ['all', 'get', 'run'] },
    },
    required: ['sql'],
    // A result that goes nowhere is an error, except for mode run.
    if: { properties: { mode: { const: 'run' } }, required: ['mode'] },
    else: { required: ['target'] },
    additionalProperties: false,
  },
  run(ctx, { sql, params, target, mode = 'all' }) {
    if (mode !== 'run' && (target === undefined || target === '')) {
      throw Errors.badParameter('"target"', 'DatabaseQuery', `is required for mode ${mode}`);
    }
    if (ctx.api.database.mode === 'postgres') {
      return pgStatement(ctx, sql, params, mode).then((result) => {
        if (target !== undefined && target !== '') ctx.memory.set(target, result);
      });
    }
    return withStatementDatabase(ctx, sql, (db) => {
      const result = mode === 'all' ? db.all(sql, params) : mode === 'get' ? db.get(sql, params) : db.run(sql, params);
      if (target !== undefined && target !== '') ctx.memory.set(target, result);
    });
  },
});
