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
import { fmt } from './lib/targets.mjs';

const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PATHS = [
  '/notes-sqlite/note/42',
  '/notes-postgres/note/42',
  '/notes-sqlite/custom/42',
  '/notes-postgres/custom/42',
];

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
    anvil = await startAnvil({
      apis: [{ from: 'notes-sqlite' }, { from: 'notes-postgres' }],
      env: { DATABASE_URL: url.toString() },
    });
    for (const path of PATHS) {
      const reply = await get(anvil.port, path);
      if (reply.status !== 200 || !reply.body.includes('"note 42"'))
        throw new Error(`GET ${path} answered ${reply.status} ${reply.body}\n${anvil.log()}`);
    }
    for (const path of PATHS) await saturate(anvil.url(path), { seconds: Math.min(2, seconds), connections });
    const perRun = [];
    for (let i = 0; i < runs; i++) {
      const r = {};
      for (const path of PATHS) r[path] = await saturate(anvil.url(path), { seconds, connections });
      progress(
        `postgres-mode run ${i + 1}/${runs}: ${PATHS.map((p) => `${p} ${Math.round(r[p].rps)} req/s p99 ${r[p].p99.toFixed(2)} ms`).join('; ')}`,
      );
      perRun.push(r);
    }
    const summary = Object.fromEntries(
      PATHS.map((path) => [
        path,
        {
          rps: median(perRun.map((r) => r[path].rps)),
          p99: median(perRun.map((r) => r[path].p99)),
          errors: perRun.reduce((n, r) => n + r[path].errors, 0),
        },
      ]),
    );
    return section(summary, perRun, { connections, seconds, runs, warnings: anvil.warnings() });
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

/** The report's section: each path's median throughput and p99, and Postgres ÷ SQLite per way of reading. */
function section(summary, perRun, { connections, seconds, runs, warnings }) {
  const [sqliteBuiltin, pgBuiltin, sqliteCustom, pgCustom] = PATHS;
  const ratio = (pg, lite) => median(perRun.map((r) => r[pg].rps / r[lite].rps));
  const row = (label, path) => [
    label,
    `\`GET ${path}\``,
    fmt(summary[path].rps),
    `${summary[path].p99.toFixed(2)} ms`,
    String(summary[path].errors),
  ];
  return {
    id: 'postgres',
    title: '11. An API on `database: postgres` against the same API on SQLite (issue 23)',
    tables: [
      {
        caption: `Saturated (wrk, ${connections} connections, ${seconds} s), median of ${runs} runs; one instance with DATABASE_URL set to a fresh database`,
        columns: ['read by primary key', 'request', 'req/s', 'p99', 'errors'],
        rows: [
          ['DatabaseQuery, SQLite', sqliteBuiltin],
          ['DatabaseQuery, Postgres', pgBuiltin],
          ['custom directive state.db, SQLite', sqliteCustom],
          ['custom directive state.db, Postgres', pgCustom],
        ].map(([label, path]) => row(label, path)),
      },
    ],
    targets: [],
    notes: [
      `Postgres ÷ SQLite throughput (ratio within each run, median): DatabaseQuery ${ratio(pgBuiltin, sqliteBuiltin).toFixed(2)}×, custom directive ${ratio(pgCustom, sqliteCustom).toFixed(2)}×.`,
      "A Postgres-mode API answers from any instance of a cluster; a SQLite one is placed on its owner. The SQLite read is in-process; the Postgres read crosses to the API's helper thread and the server (a custom directive blocks on it).",
      ...(warnings ? [`Anvil warned: ${warnings}`] : []),
    ],
    perRun: perRun.map(
      (r, i) =>
        `run ${i + 1}: ${PATHS.map((p) => `${p} ${Math.round(r[p].rps)} req/s p99 ${r[p].p99.toFixed(2)} ms`).join('; ')}`,
    ),
  };
}

standalone(import.meta.url, run);
