/**
 * The JSON Schema of api.yaml's structure (key, debug, before, endpoints, after, entries), checked
 * with ajv, and the translation of ajv's errors into sentences a user understands. Each entry's
 * parameters are checked against its directive's schema in param-schema.ts, which shares
 * `SchemaIssue`, the ajv instance (`schemaCompiler`), `describeValue` and `dedupeIssues` from here.
 */
import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { API_KEY_PATTERN } from './api-key.js';
import { pointerToPath, type PathKey, type PointAt } from './yaml-positions.js';

export { API_KEY_PATTERN, RESERVED_KEYS } from './api-key.js';
export const TOP_LEVEL_FIELDS = [
  'key',
  'debug',
  'compat',
  'database',
  'limits',
  'before',
  'endpoints',
  'after',
] as const;
/** `compat:` values: the original system whose answers an API keeps where Anvil's differ. */
export const COMPAT_MODES = ['hefesto'] as const;
/** `database:` values: where the API's SQL data lives (docs/directives-in-practice.md, "The API's database"). */
export const DATABASE_MODES = ['sqlite', 'postgres'] as const;

/**
 * `limits:` of api.yaml: the API's own sandbox limits and its quotas on shared stores, each capped
 * by the instance's maximum.
 */
export const LIMIT_FIELDS = {
  memoryMb: { minimum: 8, maximum: 4096, what: 'isolate memory in MiB' },
  cpuMs: { minimum: 1, maximum: 60_000, what: 'CPU time per custom directive call, in ms' },
  wallMs: { minimum: 1, maximum: 600_000, what: 'wall time per custom directive call (awaits included), in ms' },
  jobPayloadKb: { minimum: 1, maximum: 1024 * 1024, what: 'largest job payload, in KiB' },
  queuedJobs: { minimum: 1, maximum: 10_000_000, what: 'jobs queued and not finished' },
  queuedJobsKb: {
    minimum: 1,
    maximum: 1024 * 1024 * 1024,
    what: 'payload bytes of the jobs queued and not finished, in KiB',
  },
  kvKb: { minimum: 1, maximum: 64 * 1024 * 1024, what: 'bytes of keys and values in the key-value store, in KiB' },
  logFileKb: { minimum: 1, maximum: 64 * 1024 * 1024, what: 'size of one log file before the next is opened, in KiB' },
  logKb: { minimum: 1, maximum: 64 * 1024 * 1024, what: 'size of all log files together, in KiB' },
  logDays: { minimum: 1, maximum: 3650, what: 'days a log file is kept' },
  filesKb: {
    minimum: 1,
    maximum: 1024 * 1024 * 1024,
    what: "disk taken by the API's files (SaveFile, CachedFileSet), in KiB",
  },
  databaseKb: {
    minimum: 256,
    maximum: 1024 * 1024 * 1024,
    what: "disk taken by the API's SQLite database (its file and write-ahead log; the file holds at most half), in KiB",
  },
} as const;

/** One problem found by a schema, before it gets a file position and a label. */
export interface SchemaIssue {
  /** Path of keys from the checked value (the file, or the entry's parameters). */
  path: PathKey[];
  /** Whether to point at the key holding `path` or at its value. */
  at: PointAt;
  message: string;
}

/** The fields of an entry the structure knows (the rest are parameters); exported for the editor schema (src/deploy/reference). */
export const entrySchema = {
  type: 'object',
  required: ['directive'],
  properties: {
    directive: { type: 'string', minLength: 1 },
    groups: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
  },
  // Every other field is a parameter of the directive, checked against the directive's own schema.
};

const entryMapSchema = { type: 'object', additionalProperties: entrySchema };

/** The structure of api.yaml (SPEC §3). Semantic rules (verbs, paths, directives…) are checked apart. */
export const apiYamlSchema = {
  type: 'object',
  required: ['key', 'endpoints'],
  properties: {
    key: { type: 'string', pattern: API_KEY_PATTERN },
    debug: { type: 'boolean' },
    compat: { enum: COMPAT_MODES },
    database: { enum: DATABASE_MODES },
    limits: {
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(LIMIT_FIELDS).map(([k, v]) => [k, { type: 'integer', minimum: v.minimum, maximum: v.maximum }]),
      ),
      additionalProperties: false,
    },
    // `before:` with nothing under it (all entries commented out) is an empty list, not an error.
    before: { type: ['object', 'null'], additionalProperties: entrySchema },
    endpoints: { type: 'object', additionalProperties: entryMapSchema },
    after: { type: ['object', 'null'], additionalProperties: entrySchema },
  },
  additionalProperties: false,
};

const require = createRequire(import.meta.url);
let compiler: Ajv2020 | null = null;

/**
 * The one ajv instance that compiles the structure schema and every directive's parameter schema,
 * made at first use: loading ajv and making it costs ~90 ms, which most CLI commands and the
 * router's start never need (they import this file for its constants).
 */
export function schemaCompiler(): Ajv2020 {
  if (compiler !== null) return compiler;
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  return (compiler = new Ajv({ allErrors: true, verbose: true, strict: false, allowUnionTypes: true }));
}
let structureValidator: ValidateFunction | null = null;

/** Checks the parsed file against {@link apiYamlSchema}. */
export function checkStructure(value: unknown): SchemaIssue[] {
  structureValidator ??= schemaCompiler().compile(apiYamlSchema);
  if (structureValidator(value)) return [];
  return dedupeIssues((structureValidator.errors ?? []).map(structureIssue));
}

function structureIssue(error: ErrorObject): SchemaIssue {
  const path = pointerToPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const got = ` (got ${describeValue(error.data)})`;
  const [top, second, third] = path;

  if (path.length === 0) {
    if (error.keyword === 'required') {
      const field = String(params.missingProperty);
      const hint = field === 'key' ? 'the API\'s name, e.g. "key: users"' : 'a map of "<verb> <path>" to entries';
      return { path, at: 'value', message: `missing required field "${field}" (${hint})` };
    }
    if (error.keyword === 'additionalProperties') {
      const field = String(params.additionalProperty);
      return {
        path: [field],
        at: 'key',
        message: `unknown top-level field "${field}" (allowed: ${TOP_LEVEL_FIELDS.join(', ')})`,
      };
    }
    if (error.keyword === 'type') {
      const message =
        error.data === null || error.data === undefined
          ? 'the file is empty: it needs at least "key" and "endpoints"'
          : `the file must be a map with "key" and "endpoints"${got}`;
      return { path, at: 'value', message };
    }
  }

  if (top === 'key' && path.length === 1) {
    if (error.keyword === 'pattern') {
      return {
        path,
        at: 'value',
        message: `key "${String(error.data)}" is not valid: use 1 to 63 lower-case letters, digits and "-", starting with a letter or digit`,
      };
    }
    return { path, at: 'value', message: `"key" must be a string${got}` };
  }
  if (top === 'debug' && path.length === 1)
    return { path, at: 'value', message: `"debug" must be true or false${got}` };
  if (top === 'compat' && path.length === 1)
    return { path, at: 'value', message: `"compat" must be one of: ${COMPAT_MODES.join(', ')}${got}` };
  if (top === 'database' && path.length === 1)
    return { path, at: 'value', message: `"database" must be one of: ${DATABASE_MODES.join(', ')}${got}` };
  if (top === 'limits') {
    if (path.length === 1 && error.keyword === 'additionalProperties') {
      const field = String(params.additionalProperty);
      return {
        path: ['limits', field],
        at: 'key',
        message: `unknown limit "${field}" (allowed: ${Object.keys(LIMIT_FIELDS).join(', ')})`,
      };
    }
    if (path.length === 1)
      return { path, at: 'value', message: `"limits" must be a map such as { memoryMb: 64, cpuMs: 50 }${got}` };
    const spec = LIMIT_FIELDS[second as keyof typeof LIMIT_FIELDS];
    if (spec !== undefined) {
      return {
        path,
        at: 'value',
        message: `limit "${second}" (${spec.what}) must be an integer from ${spec.minimum} to ${spec.maximum}${got}`,
      };
    }
  }

  if ((top === 'before' || top === 'after') && path.length === 1) {
    return { path, at: 'value', message: `"${top}" must be a map of label to entry${got}` };
  }
  if (top === 'endpoints' && path.length === 1) {
    return { path, at: 'value', message: `"endpoints" must be a map of "<verb> <path>" to entries${got}` };
  }
  if (top === 'endpoints' && path.length === 2) {
    return { path, at: 'value', message: `endpoint "${second}" must be a map of label to entry${got}` };
  }

  // Inside an entry: [before|after, label, …] or [endpoints, route, label, …].
  const entryDepth = top === 'endpoints' ? 3 : 2;
  const label = top === 'endpoints' ? third : second;
  const field = path[entryDepth];
  if (label !== undefined) {
    const entry = `entry "${label}"`;
    if (path.length === entryDepth) {
      if (error.keyword === 'required') {
        return { path, at: 'key', message: `missing field "directive" in ${entry} (which directive should it run?)` };
      }
      return {
        path,
        at: 'value',
        message: `${entry} must be a map with a "directive" field, e.g. { directive: Ping }${got}`,
      };
    }
    if (field === 'directive') {
      const message =
        error.keyword === 'minLength'
          ? `"directive" of ${entry} is empty`
          : `"directive" of ${entry} must be a directive name${got}`;
      return { path, at: 'value', message };
    }
    if (field === 'groups' && path.length === entryDepth + 1) {
      const message =
        error.keyword === 'minItems'
          ? `"groups" of ${entry} must name at least one group`
          : `"groups" of ${entry} must be a list of group names, e.g. [ERROR_FLOW]${got}`;
      return { path, at: 'value', message };
    }
    if (field === 'groups') {
      return { path, at: 'value', message: `each group in "groups" of ${entry} must be a non-empty name${got}` };
    }
  }
  return { path, at: 'value', message: `${path.join(' › ') || 'the file'} ${error.message ?? 'is not valid'}` };
}

/** A short description of a value for "(got …)". */
export function describeValue(value: unknown): string {
  if (value === undefined || value === null) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

/** Drops the issues that repeat an earlier one (same path, same message). */
export function dedupeIssues(issues: SchemaIssue[]): SchemaIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const id = `${JSON.stringify(issue.path)}\u0000${issue.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
