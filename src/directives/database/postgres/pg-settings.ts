/**
 * The limits of an API's Postgres role and who an API is, without the `pg` driver: every actor
 * thread loads the bridge (pg-bridge.ts), and only the helper thread of a `database: postgres` API
 * needs the driver (a spare thread that loaded it took ~120 ms longer to be ready).
 */
export const PG_API_SETTINGS = {
  statementTimeoutMs: 5000,
  lockTimeoutMs: 5000,
  idleInTransactionMs: 10_000,
  /** Connections one API role may hold across the whole cluster. */
  connectionLimit: 32,
  tempFileLimit: '256MB',
} as const;

export interface ApiIdentity {
  host: string;
  env: string;
  key: string;
}
