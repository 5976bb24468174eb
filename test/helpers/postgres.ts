import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The machine's PostgreSQL (trust auth); `PG_ADMIN_URL` overrides. Tests never use its databases directly. */
export const PG_ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A fresh database of the test's own on the machine's PostgreSQL, dropped (with every connection to
 * it) by `drop()`. `url` is what an instance gets as `DATABASE_URL`.
 */
export class FreshPostgres {
  private constructor(
    readonly name: string,
    readonly url: string,
  ) {}

  static async create(prefix = 'anvil_test'): Promise<FreshPostgres> {
    const name = `${prefix}_${randomBytes(6).toString('hex')}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${name}`;
    return new FreshPostgres(name, url.toString());
  }

  /** Runs one statement in this database as the admin user. */
  async query<Row extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<Row[]> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      return (await client.query<Row>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }

  async drop(): Promise<void> {
    await adminQuery(`DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`);
  }
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
