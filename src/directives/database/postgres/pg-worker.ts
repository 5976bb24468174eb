/**
 * The PostgreSQL helper thread of one actor thread of an API with `database: postgres`: it makes
 * the API's role and schema when missing, applies migrations, and runs the statements the actor
 * thread sends, on a small pool logged in as the API's role. An actor thread may wait for a reply
 * without turning its event loop (a custom directive's `state.db` is synchronous): such a reply
 * is followed by a notify on the shared signal.
 */
import { workerData } from 'node:worker_threads';
import pg from 'pg';
import { DATABASE_LIMITS } from '../database-limits.js';
import { toPgFailure, type PgFailure } from './pg-failure.js';
import { migratePostgres } from './pg-migrate.js';
import type { PgEnvelope, PgReply, PgRequest, PgWorkerInit } from './pg-protocol.js';
import { provisionApi } from './pg-provision.js';
import { pgTypes } from './pg-type-parsers.js';
import { pgRow } from './pg-values.js';

const init = workerData as PgWorkerInit;
const signal = new Int32Array(init.signal);
/** Connections of one actor thread (the role's own limit bounds them across the cluster). */
const POOL_SIZE = 4;

interface Ready {
  pool: pg.Pool;
  schema: string;
}

let ready: Promise<Ready> | null = null;
const transactions = new Map<number, pg.PoolClient>();
let nextTx = 1;
const ignore = () => undefined;

/** Role, schema and migrations, once; a failure is tried again by the next request. */
function prepare(): Promise<Ready> {
  ready ??= (async () => {
    const login = await provisionApi(init.adminUrl, init.api);
    const url = new URL(init.adminUrl);
    url.username = login.schema;
    url.password = login.password;
    const pool = new pg.Pool({
      connectionString: url.toString(),
      max: POOL_SIZE,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: DATABASE_LIMITS.busyTimeoutMs,
      application_name: `anvil:${init.api.key}`,
      types: pgTypes,
    });
    pool.on('error', () => undefined); // an idle connection that broke: the pool replaces it
    try {
      await migratePostgres(pool, login.schema, init.releaseDir);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    return { pool, schema: login.schema };
  })();
  ready.catch(() => {
    ready = null;
  });
  return ready;
}

async function operate(request: PgRequest): Promise<unknown> {
  const { pool, schema } = await prepare();
  switch (request.op) {
    case 'ready':
      return schema;
    case 'begin': {
      const client = await pool.connect();
      // Held across requests' awaits: the server may end it meanwhile (idle_in_transaction_session_timeout);
      // its next statement then fails, and nothing else does.
      client.on('error', ignore);
      try {
        await client.query('BEGIN');
      } catch (error) {
        client.off('error', ignore);
        client.release(true);
        throw error;
      }
      const tx = nextTx++;
      transactions.set(tx, client);
      return tx;
    }
    case 'end':
      return endTransaction(request.tx, request.action);
    case 'query': {
      const on = request.tx === null ? pool : transactions.get(request.tx);
      if (on === undefined) throw { kind: 'sqlFailed', args: ['the transaction is over'] } satisfies PgFailure;
      const result = await on.query({ text: request.text, values: request.values, rowMode: 'array' });
      if (request.mode === 'run') return { changes: result.rowCount ?? 0, lastInsertRowid: lastReturned(result) };
      if (result.rows.length > DATABASE_LIMITS.maxRows) {
        throw {
          kind: 'sqlLimit',
          args: [`SQL result has more than ${DATABASE_LIMITS.maxRows} rows (the limit of one query): add a LIMIT`],
        } satisfies PgFailure;
      }
      const names = result.fields.map((field) => field.name);
      if (request.mode === 'get')
        return result.rows[0] === undefined ? null : pgRow(names, result.rows[0] as unknown[]);
      return result.rows.map((values) => pgRow(names, values as unknown[]));
    }
  }
}

/** `run` with RETURNING: the first column of the last row (an id, usually); without rows, null. */
function lastReturned(result: pg.QueryResult<unknown[]>): unknown {
  const last = result.rows.at(-1);
  return last === undefined ? null : pgRow(['v'], [last[0]]).v;
}

async function endTransaction(tx: number, action: 'commit' | 'rollback'): Promise<null> {
  const client = transactions.get(tx);
  if (client === undefined) return null;
  transactions.delete(tx);
  client.off('error', ignore);
  try {
    await client.query(action === 'commit' ? 'COMMIT' : 'ROLLBACK');
    client.release();
  } catch (error) {
    client.release(true); // its transaction state is unknown: never reused
    throw error;
  }
  return null;
}

init.port.on('message', (envelope: PgEnvelope) => {
  void operate(envelope)
    .then(
      (ok): PgReply => ({ id: envelope.id, ok }),
      (error: unknown): PgReply => ({ id: envelope.id, error: toPgFailure(error) }),
    )
    .then((reply) => {
      init.port.postMessage(reply);
      if (envelope.sync) {
        Atomics.store(signal, 0, 1);
        Atomics.notify(signal, 0);
      }
    });
});
