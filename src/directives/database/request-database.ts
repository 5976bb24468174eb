/**
 * Which connection a request's SQL goes to: its transaction's while it has one open (begun by
 * DatabaseBeginTransaction), the thread's shared one otherwise. The transaction is held by the
 * request (ctx.held), so the engine rolls it back when a directive throws and when the pass ends
 * with it still open.
 */
import type { DirectiveContext } from '../../engine/context.js';
import type { HeldResource } from '../../engine/held-resources.js';
import { Errors } from '../../shared/errors.js';
import { apiDatabase, DATABASE_LIMITS, type ApiDatabase } from './api-database.js';
import { threadTransactions } from './thread-transactions.js';

const HELD_AS = 'the database transaction';

interface HeldTransaction extends HeldResource {
  readonly db: ApiDatabase;
  end(action: 'commit' | 'rollback'): void;
}

/** The database the request's statements run on now. */
export function requestDatabase(ctx: DirectiveContext): ApiDatabase {
  return ctx.held.get<HeldTransaction>(HELD_AS)?.db ?? apiDatabase(ctx.api);
}

/**
 * Runs `work` with the database for one statement of a built-in directive: like requestDatabase,
 * but a write outside any transaction first waits (without blocking the thread) for another
 * request's transaction on this thread to end, at most DATABASE_LIMITS.busyTimeoutMs. Synchronous
 * when there is nothing to wait for.
 */
export function withStatementDatabase<T>(
  ctx: DirectiveContext,
  sql: string,
  work: (db: ApiDatabase) => T,
): T | Promise<T> {
  const own = ctx.held.get<HeldTransaction>(HELD_AS);
  if (own !== undefined) return work(own.db);
  const db = apiDatabase(ctx.api);
  const transactions = threadTransactions(ctx.api);
  if (!transactions.open || !db.writes(sql)) return work(db);
  return (async () => {
    const deadline = Date.now() + DATABASE_LIMITS.busyTimeoutMs;
    // Checked again right before the work runs: the next transaction in line may have begun.
    while (transactions.open) await transactions.whenNoneOpen(deadline - Date.now());
    return work(db);
  })();
}

export async function beginTransaction(ctx: DirectiveContext): Promise<void> {
  if (ctx.held.get(HELD_AS) !== undefined) throw Errors.transactionAlreadyOpen();
  const transactions = threadTransactions(ctx.api);
  const owner = {};
  const db = await transactions.begin(owner);
  let ended = false;
  const held: HeldTransaction = {
    db,
    end(action) {
      if (ended) return;
      ended = true;
      transactions.finish(owner, action);
    },
    release() {
      held.end('rollback');
    },
  };
  ctx.held.hold(HELD_AS, held);
}

/** Commits the request's transaction; a failed commit rolls it back and throws. */
export function commitTransaction(ctx: DirectiveContext): void {
  const held = ctx.held.get<HeldTransaction>(HELD_AS);
  if (held === undefined) throw Errors.transactionNotOpen('DatabaseCommitTransaction');
  ctx.held.forget(HELD_AS);
  held.end('commit');
}

/** Rolls back the request's transaction; without one (already rolled back after an error, say) nothing happens. */
export function rollbackTransaction(ctx: DirectiveContext): void {
  const held = ctx.held.get<HeldTransaction>(HELD_AS);
  if (held === undefined) return;
  ctx.held.forget(HELD_AS);
  held.end('rollback');
}
