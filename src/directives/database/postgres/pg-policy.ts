/**
 * Which SQL an API with `database: postgres` may send (SECURITY.md: an API reaches no data but its
 * own). The wall is PostgreSQL's: the API's login role owns its schema and nothing else (see
 * pg-provision.ts). This lexical check, on the shared tokenizer (sql-tokens.ts, PostgreSQL dialect),
 * refuses on top of it what a role may do to itself or to the cluster that the wall does not stop:
 * change its session (SET, set_config: its statement_timeout), run code or SQL built from text (DO,
 * functions, query_to_xml), reach the server (COPY, LISTEN/NOTIFY, advisory locks shared with
 * Anvil's own), look at other schemas through the catalogs or by name, manage roles and grants.
 */
import { Errors } from '../../../shared/errors.js';
import { splitSqlStatements, type SqlStatement } from '../sql-statements.js';
import { significant, tokenizeSql, type SqlToken } from '../sql-tokens.js';
import { API_SCHEMA_PREFIX } from './pg-names.js';

/** Statements refused by their first word. */
const REFUSED_FIRST: Readonly<Record<string, string>> = {
  set: "SET is not allowed (the API's session settings are fixed)",
  reset: "RESET is not allowed (the API's session settings are fixed)",
  do: 'DO is not allowed',
  copy: 'COPY is not allowed',
  listen: 'LISTEN is not allowed',
  unlisten: 'UNLISTEN is not allowed',
  notify: 'NOTIFY is not allowed',
  grant: 'GRANT is not allowed',
  revoke: 'REVOKE is not allowed',
  load: 'LOAD is not allowed',
  call: 'CALL is not allowed',
  lock: 'LOCK is not allowed',
  vacuum: 'VACUUM is not allowed',
  analyze: 'ANALYZE is not allowed',
  cluster: 'CLUSTER is not allowed',
  reindex: 'REINDEX is not allowed',
  checkpoint: 'CHECKPOINT is not allowed',
  discard: 'DISCARD is not allowed',
  prepare: 'PREPARE is not allowed',
  execute: 'EXECUTE is not allowed',
  deallocate: 'DEALLOCATE is not allowed',
  declare: 'cursors (DECLARE) are not allowed',
  fetch: 'cursors (FETCH) are not allowed',
  move: 'cursors (MOVE) are not allowed',
  close: 'cursors (CLOSE) are not allowed',
  explain: 'EXPLAIN is not allowed',
  show: "SHOW is not allowed (the server's settings are not the API's)",
  security: 'SECURITY LABEL is not allowed',
  import: 'IMPORT FOREIGN SCHEMA is not allowed',
  reassign: 'REASSIGN OWNED is not allowed',
  begin: 'transaction control (BEGIN) is not allowed',
  start: 'transaction control (START TRANSACTION) is not allowed',
  commit: 'transaction control (COMMIT) is not allowed',
  end: 'transaction control (END) is not allowed',
  rollback: 'transaction control (ROLLBACK) is not allowed',
  abort: 'transaction control (ABORT) is not allowed',
  savepoint: 'transaction control (SAVEPOINT) is not allowed',
  release: 'transaction control (RELEASE) is not allowed',
};

/** Objects CREATE, ALTER and DROP may not name (the word right after, or after OR REPLACE / a modifier). */
const REFUSED_OBJECTS = new Set([
  'role',
  'user',
  'group',
  'schema',
  'database',
  'tablespace',
  'extension',
  'language',
  'function',
  'procedure',
  'trigger',
  'event',
  'rule',
  'server',
  'foreign',
  'publication',
  'subscription',
  'system',
  'policy',
  'aggregate',
  'operator',
  'cast',
  'conversion',
  'transform',
  'access',
  'default',
  'owned',
  'routine',
  'statistics',
  'collation',
]);
/** Words between CREATE and the object that may come first (`CREATE OR REPLACE FUNCTION`, `CREATE TRUSTED LANGUAGE`, …). */
const CREATE_MODIFIERS = new Set([
  'or',
  'replace',
  'trusted',
  'procedural',
  'constraint',
  'unique',
  'temp',
  'temporary',
  'unlogged',
  'global',
  'local',
  'recursive',
  'materialized',
]);

/** Functions refused by name: session settings, the server, SQL run from text, other schemas' names. */
const REFUSED_FUNCTIONS: ReadonlyArray<[RegExp, string]> = [
  [/^set_config$/, "set_config() is not allowed (the API's session settings are fixed)"],
  [/^pg_(try_)?advisory_/, 'advisory locks are not allowed'],
  [/^pg_notify$/, 'pg_notify() is not allowed'],
  [/^(query|cursor|table|schema|database)_to_xml/, 'functions that run SQL given as text are not allowed'],
  [/^ts_(stat|rewrite)$/, 'functions that run SQL given as text are not allowed'],
  [
    /^(dblink|lo_|pg_read_|pg_ls_|pg_stat_file|pg_file_|pg_terminate_backend|pg_cancel_backend|pg_reload_conf|pg_rotate_logfile)/,
    'server functions are not allowed',
  ],
  [/^to_reg/, 'looking up names of the catalogs is not allowed'],
  [/^has_.*_privilege$/, 'privilege checks on other objects are not allowed'],
  [/^current_setting$/, 'current_setting() is not allowed'],
  [/^inet_(server|client)_(addr|port)$/, "the server's addresses are not the API's"],
];

/** Names of the catalogs and of what reveals the server and the other APIs. */
function refusedName(name: string): string | null {
  for (const [pattern, refusal] of REFUSED_FUNCTIONS) if (pattern.test(name)) return refusal;
  if (name === 'pg_catalog' || name === 'information_schema' || name === 'pg_toast')
    return `${name} is not allowed (the catalogs show other APIs' schemas)`;
  if (/^pg_/.test(name) && name !== 'pg_sleep' && name !== 'pg_typeof' && name !== 'pg_column_size')
    return `${name} is not allowed (the catalogs show other APIs' schemas)`;
  if (/^reg(class|namespace|role|proc|procedure|oper|operator|type|config|dictionary|collation)$/.test(name))
    return `${name} is not allowed (looking up names of the catalogs)`;
  return null;
}

export interface PgCheckOptions {
  /** The API's own schema: the only one a qualified name may start with. */
  schema: string;
  /** Allow several statements (migrations). */
  allowMany?: boolean;
}

/** A name as PostgreSQL folds it: a bare word in lower case, a quoted one as written. */
const nameOf = (t: SqlToken) => (t.kind === 'quoted' ? t.value : t.value.toLowerCase());

/** Throws the refusal for `sql`; returns its statements (one unless `allowMany`). */
export function checkPostgresSql(sql: string, options: PgCheckOptions): SqlStatement[] {
  const statements = splitSqlStatements(sql, tokenizeSql(sql, 'postgres'));
  if (!options.allowMany && statements.length > 1) {
    throw Errors.sqlRefused(`more than one statement in one string (found ${statements.length})`);
  }
  for (const statement of statements) checkStatement(statement.tokens.filter(significant), options.schema);
  return statements;
}

function checkStatement(tokens: SqlToken[], schema: string): void {
  const first = tokens[0];
  if (first === undefined) return;
  if (first.kind === 'ident') {
    const refusal = REFUSED_FIRST[first.value];
    if (refusal !== undefined) throw Errors.sqlRefused(refusal);
  }
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === 'semi') throw Errors.sqlRefused('a statement may not hold another one');
    if (token.kind === 'variable' && !/^(\?|\$\d+|:[A-Za-z_]\w*)$/.test(token.text))
      throw Errors.sqlRefused(`${token.text} is not a parameter PostgreSQL mode knows (use ?, $1 or :name)`);
    if (token.kind !== 'ident' && token.kind !== 'quoted') continue;
    const name = nameOf(token);
    const refusal = refusedName(name);
    if (refusal !== null) throw Errors.sqlRefused(refusal);
    if (i === 0 && (name === 'create' || name === 'alter' || name === 'drop')) checkDefinition(tokens, i);
    if (first.value === 'alter' && token.kind === 'ident') checkAlterClause(tokens, i);
    const next = tokens[i + 1];
    if (
      next?.kind === 'punct' &&
      next.text === '.' &&
      (tokens[i + 2]?.kind === 'ident' || tokens[i + 2]?.kind === 'quoted')
    ) {
      checkQualifier(name, schema);
    }
  }
}

/** CREATE/ALTER/DROP of a refused kind of object (roles, schemas, functions, …). */
function checkDefinition(tokens: SqlToken[], at: number): void {
  let j = at + 1;
  while (tokens[j]?.kind === 'ident' && CREATE_MODIFIERS.has(tokens[j]!.value)) j++;
  const object = tokens[j];
  if (object?.kind === 'ident' && REFUSED_OBJECTS.has(object.value)) {
    throw Errors.sqlRefused(`${tokens[at]!.value.toUpperCase()} ${object.value.toUpperCase()} is not allowed`);
  }
}

/**
 * Inside ALTER: `SET SCHEMA` / `SET TABLESPACE` (moving an object out), `SET (…)` / `RESET (…)`
 * (storage settings) and `OWNER TO` are refused; `ALTER COLUMN c SET DEFAULT|NOT NULL|DATA TYPE` are not.
 */
function checkAlterClause(tokens: SqlToken[], at: number): void {
  const word = tokens[at]!.value;
  const next = tokens[at + 1];
  if (word === 'owner') throw Errors.sqlRefused('ALTER … OWNER TO is not allowed');
  if (word !== 'set' && word !== 'reset') return;
  if (next?.kind === 'punct' && next.text === '(')
    throw Errors.sqlRefused(`ALTER … ${word.toUpperCase()} (…) is not allowed`);
  if (
    next?.kind === 'ident' &&
    ['schema', 'tablespace', 'access', 'logged', 'unlogged', 'without'].includes(next.value)
  ) {
    throw Errors.sqlRefused(`ALTER … ${word.toUpperCase()} ${next.value.toUpperCase()} is not allowed`);
  }
}

/**
 * The first part of a qualified name: a table or alias (`t.col`) or a schema. A schema is refused
 * unless it is the API's own: Anvil's API schemas share a prefix, and `public` and the catalogs are
 * named here too. (The role has no USAGE on another API's schema anyway.)
 */
function checkQualifier(name: string, schema: string): void {
  if (name === schema) return;
  if (name.startsWith(API_SCHEMA_PREFIX) || name === 'public' || name.startsWith('anvil')) {
    throw Errors.sqlRefused(`the schema ${name} is not the API's own`);
  }
}
