// Issue 23: a read endpoint of an API with `database: postgres` against the same API on its own
// SQLite file, on one instance (DATABASE_URL: a fresh database of the machine's PostgreSQL, dropped
// afterwards, with the API's role). bench/apis/notes-sqlite and notes-postgres differ only by
// `database:` and their migration's dialect: 1000 rows, read by primary key, through DatabaseQuery
// (`/note/42`: the built-in awaits the helper thread) and through a custom directive's state.db
// (`/custom/42`: the thread blocks on the helper thread's answer).
//
// Per run: the saturated throughput and p99 (wrk, BENCH_CONNECTIONS) of each of the four paths.
// PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres) is where the database is made.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { progress, standalone } from './lib/config.mjs';
import { get, startAnvil } from './lib/instance.mjs';
import { saturate } from './lib/load.mjs';
import { median } from './lib/stats.mjs';

const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PATHS = ['/notes-sqlite/note/42', '/notes-postgres/note/42', '/notes-sqlite/custom/42', '/notes-postgres/custom/42'];

async function admin(sql) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

export async function run(config) {
  const { seconds, runs, connections } = config;
  const name = `anvil_bench_${randomBytes(5).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  let anvil = null;
  try {
    progress(`postgres-mode: starting Anvil with notes-sqlite and notes-postgres (DATABASE_URL …/${name})`);
    anvil = await startAnvil({ apis: [{ from: 'notes-sqlite' }, { from: 'notes-postgres' }], env: { DATABASE_URL: url.toString() } });
    for (const path of PATHS) {
      const reply = await get(anvil.port, path);
      if (reply.status !== 200 || !reply.body.includes('"note 42"')) throw new Error(`GET ${path} answered ${reply.status} ${reply.body}\n${anvil.log()}`);
    }
    for (const path of PATHS) await saturate(anvil.url(path), { seconds: Math.min(2, seconds), connections });
    const perRun = [];
    for (let i = 0; i < runs; i++) {
      const r = {};
      for (const path of PATHS) r[path] = await saturate(anvil.url(path), { seconds, connections });
      progress(`postgres-mode run ${i + 1}/${runs}: ${PATHS.map((p) => `${p} ${Math.round(r[p].rps)} req/s p99 ${r[p].p99.toFixed(2)} ms`).join('; ')}`);
      perRun.push(r);
    }
    const summary = Object.fromEntries(
      PATHS.map((path) => [path, { rps: median(perRun.map((r) => r[path].rps)), p99: median(perRun.map((r) => r[path].p99)), errors: perRun.reduce((n, r) => n + r[path].errors, 0) }]),
    );
    return { connections, seconds, runs, paths: summary, warnings: anvil.warnings() };
  } finally {
    await anvil?.stop();
    const roles = await admin(`SELECT datname FROM pg_database WHERE datname = '${name}'`);
    if (roles.length > 0) {
      const apiRoles = await (async () => {
        const client = new pg.Client({ connectionString: url.toString() });
        await client.connect();
        try {
          return (await client.query('SELECT role FROM anvil_pgdb.api_roles')).rows.map((r) => r.role);
        } catch {
          return [];
        } finally {
          await client.end();
        }
      })();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      for (const role of apiRoles) await admin(`DROP ROLE IF EXISTS "${role}"`);
    }
  }
}

standalone(import.meta.url, run);
