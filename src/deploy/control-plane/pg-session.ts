import pg from 'pg';
import { AnvilError, Errors } from '../../shared/errors.js';

/** SQLSTATE classes and Node error codes that mean "Postgres cannot be reached", not "this write is wrong". */
const UNREACHABLE_SQLSTATE = /^(08|53|57P|3D000)/;
const UNREACHABLE_NODE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const UNREACHABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed/i;

export function isUnreachable(error: unknown): boolean {
  if (error instanceof AnvilError) return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (UNREACHABLE_SQLSTATE.test(code) || UNREACHABLE_NODE.has(code))) return true;
  return error instanceof Error && UNREACHABLE_MESSAGE.test(error.message);
}

/** A pool for the control plane's reads and writes; an idle connection that breaks is dropped, never thrown. */
export function openPool(url: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 4,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: 'anvil',
  });
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Runs `work` in one transaction on a pooled connection. A connection that failed is discarded, and
 * a Postgres that cannot be reached becomes ANVIL_ERR_CONTROL_PLANE_UNAVAILABLE (503), its cause
 * kept for the log.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw unavailable(error);
  }
  let broken = false;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    if (isUnreachable(error)) {
      broken = true;
      throw unavailable(error);
    }
    throw error;
  } finally {
    client.release(broken);
  }
}

function unavailable(error: unknown): AnvilError {
  const wrapped = Errors.controlPlaneUnavailable();
  (wrapped as { cause?: unknown }).cause = error;
  return wrapped;
}
