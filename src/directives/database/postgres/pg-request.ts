/**
 * What the database directives and `state.db` do for an API with `database: postgres`: the same
 * interface as in SQLite mode (directives/database/request-database.ts), on the thread's helper (pg-bridge.ts).
 * Built-in directives await the reply; a custom directive's `state.db` blocks its thread for it.
 *
 * Transactions work: DatabaseBeginTransaction takes a connection of the helper's pool for the
 * request (BEGIN), its DatabaseQuery and `state.db` statements run on it, and it ends with
 * DatabaseCommitTransaction, DatabaseRollback, or a rollback when a directive throws or the pass
 * ends. Unlike SQLite mode no request waits for another's transaction: each has its own connection,
 * and PostgreSQL's row locks (up to the role's lock_timeout) order conflicting writes.
 */
import type { ApiRuntime, DirectiveContext } from '../../../engine/context.js';
import type { HeldResource } from '../../../engine/held-resources.js';
import { AnvilError, Errors } from '../../../shared/errors.js';
import { DATABASE_LIMITS } from '../database-limits.js';
import { sqlTextCache } from '../sql-cache.js';
import { significant, type SqlToken } from '../sql-tokens.js';
import { PgBridge } from './pg-bridge.js';
import { bindPostgres } from './pg-params.js';
import { checkPostgresSql } from './pg-policy.js';
import type { PgRequest, StatementMode } from './pg-protocol.js';

const HELD_AS = 'the database transaction';

interface HeldPgTransaction extends HeldResource {
  readonly tx: number;
  readonly bridge: PgBridge;
}

/** A statement the policy let through: its parameters' tokens, and whether it gives rows back. */
interface Checked {
  variables: SqlToken[];
  returnsRows: boolean;
}

interface ThreadPg {
  bridge: PgBridge | null;
  readonly verdicts: ReturnType<typeof sqlTextCache<Checked | AnvilError>>;
  close(): void;
}

function threadPg(api: ApiRuntime): ThreadPg {
  return api.resource<ThreadPg>('pg', () => ({
    bridge: null,
    verdicts: sqlTextCache<Checked | AnvilError>(1000, 2 * 1024 * 1024),
    close() {
      this.bridge?.close();
    },
  }));
}

/** The thread's helper, started on first use (and again if it stopped). */
function bridgeOf(api: ApiRuntime): { pg: ThreadPg; bridge: PgBridge } {
  if (api.database.url === null) {
    throw Errors.sqlFailed(
      "this API has database: postgres, and this instance runs without the cluster's Postgres (DATABASE_URL)",
    );
  }
  const pg = threadPg(api);
  if (pg.bridge === null || !pg.bridge.alive)
    pg.bridge = new PgBridge(api.database.url, { host: api.host, env: api.env, key: api.key }, api.releaseDir);
  return { pg, bridge: pg.bridge };
}

/** DatabaseConnect, DatabaseCreate, DatabaseMigrate: the role, the schema and the migrations are there. */
export async function pgReady(ctx: DirectiveContext): Promise<void> {
  const { bridge } = bridgeOf(ctx.api);
  bridge.schema ??= (await bridge.call({ op: 'ready' })) as string;
}

/** One statement of DatabaseQuery: its result (rows, a row or null, or {changes, lastInsertRowid}). */
export async function pgStatement(
  ctx: DirectiveContext,
  sql: string,
  params: unknown,
  mode: StatementMode,
): Promise<unknown> {
  const { pg, bridge } = bridgeOf(ctx.api);
  bridge.schema ??= (await bridge.call({ op: 'ready' })) as string;
  return bridge.call(request(pg, bridge.schema, ctx, sql, params, mode));
}

/** `state.db` of a custom directive: synchronous, as in SQLite mode. */
export function pgSandboxDatabase(
  ctx: DirectiveContext,
): Record<StatementMode, (sql: string, params?: unknown) => unknown> {
  const run = (mode: StatementMode) => (sql: string, params?: unknown) => {
    const { pg, bridge } = bridgeOf(ctx.api);
    bridge.schema ??= bridge.callSync({ op: 'ready' }) as string;
    return bridge.callSync(request(pg, bridge.schema, ctx, sql, params, mode));
  };
  return { all: run('all'), get: run('get'), run: run('run') };
}

function request(
  pg: ThreadPg,
  schema: string,
  ctx: DirectiveContext,
  sql: string,
  params: unknown,
  mode: StatementMode,
): PgRequest {
  const checked = check(pg, schema, sql);
  if (mode !== 'run' && !checked.returnsRows) {
    throw Errors.sqlFailed(`mode ${mode} needs a statement that returns rows (SELECT, or … RETURNING); use run`);
  }
  const { text, values } = bindPostgres(sql, checked.variables, params);
  const held = ctx.held.get<HeldPgTransaction>(HELD_AS);
  return { op: 'query', text, values, mode, tx: held?.tx ?? null };
}

/** The policy's verdict on `sql` (remembered per text, per thread). */
function check(pg: ThreadPg, schema: string, sql: string): Checked {
  if (typeof sql !== 'string') throw Errors.sqlFailed('the SQL text must be a string');
  const known = pg.verdicts.get(sql);
  if (known instanceof AnvilError) throw known;
  if (known !== undefined) return known;
  if (Buffer.byteLength(sql, 'utf8') > DATABASE_LIMITS.maxSqlBytes) {
    throw Errors.sqlLimit(`SQL text longer than ${DATABASE_LIMITS.maxSqlBytes} bytes (the limit of one query)`);
  }
  let verdict: Checked | AnvilError;
  try {
    const [statement] = checkPostgresSql(sql, { schema });
    const tokens = (statement?.tokens ?? []).filter(significant);
    const first = tokens[0]?.value;
    verdict = {
      variables: tokens.filter((t) => t.kind === 'variable'),
      returnsRows:
        first === '(' ||
        first === 'select' ||
        first === 'with' ||
        first === 'values' ||
        first === 'table' ||
        tokens.some((t) => t.kind === 'ident' && t.value === 'returning'),
    };
  } catch (error) {
    if (!(error instanceof AnvilError)) throw error;
    verdict = error;
  }
  pg.verdicts.set(sql, verdict);
  if (verdict instanceof AnvilError) throw verdict;
  return verdict;
}

export async function pgBegin(ctx: DirectiveContext): Promise<void> {
  if (ctx.held.get(HELD_AS) !== undefined) throw Errors.transactionAlreadyOpen();
  const { bridge } = bridgeOf(ctx.api);
  bridge.schema ??= (await bridge.call({ op: 'ready' })) as string;
  const tx = (await bridge.call({ op: 'begin' })) as number;
  const held: HeldPgTransaction = {
    tx,
    bridge,
    release() {
      bridge.call({ op: 'end', tx, action: 'rollback' }).catch(() => undefined);
    },
  };
  ctx.held.hold(HELD_AS, held);
}

/** DatabaseCommitTransaction (`commit`) and DatabaseRollback (`rollback`, nothing without a transaction). */
export async function pgEnd(ctx: DirectiveContext, action: 'commit' | 'rollback'): Promise<void> {
  const held = ctx.held.get<HeldPgTransaction>(HELD_AS);
  if (held === undefined) {
    if (action === 'commit') throw Errors.transactionNotOpen('DatabaseCommitTransaction');
    return;
  }
  ctx.held.forget(HELD_AS);
  await held.bridge.call({ op: 'end', tx: held.tx, action });
}
