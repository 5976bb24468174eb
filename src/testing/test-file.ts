/**
 * A test file of an API folder (`tests/*.yaml`, run by `anvil test`): its cases, each one or more
 * requests with what their answers must hold, and the fixtures, mocks and clock they run with.
 * Read with the loader's YAML reader and checked against {@link testFileSchema}; every problem
 * names the file, line and column, and every case keeps its line so a failure can point at it.
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { describeValue, schemaCompiler } from '../deploy/api-yaml/api-schema.js';
import { YAML_LIMITS } from '../shared/api-model/input-limits.js';
import { readYaml } from '../deploy/api-yaml/read-yaml.js';
import type { ConfigError } from '../shared/api-model/types.js';
import {
  offsetToPosition,
  pointerToPath,
  positionOf,
  type LinePosition,
  type PathKey,
} from '../deploy/api-yaml/yaml-positions.js';
import { durationMs } from './test-clock.js';

export interface TestRequest {
  verb: string;
  /** The endpoint's path as api.yaml writes it, with its values: `/notes/7`. */
  path: string;
  query: string;
  headers: Record<string, string>;
  body?: unknown;
  ip: string;
}

export interface Expectation {
  status?: number;
  /** Header name (any case) → its exact value, `{ matches: <regular expression> }`, or null: the header must be absent. */
  headers?: Record<string, string | null | { matches: string }>;
  /** A JSON subset of the answer's body (a string: the body's text, exactly). */
  body?: unknown;
}

export type TestStep =
  | { kind: 'request'; request: TestRequest; expect: Expectation; at: LinePosition }
  | { kind: 'advance'; ms: number; at: LinePosition };

export interface HttpMock {
  verb: string;
  /** Origin and path (and query, when it must match too): `https://api.example.com/users/1`. */
  url: string;
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

export interface ApiMock {
  api: string;
  verb: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

export interface Fixtures {
  /** Statements run in the API's database after its migrations. */
  sql: string[];
  /** Entries of the API's key space, as RedisSet writes them: name → value. */
  kv: Record<string, unknown>;
  /** Merged over the env's Maps: `{ main: { greeting: Hi } }`. */
  maps: Record<string, unknown>;
}

export interface Mocks {
  http: HttpMock[];
  apis: ApiMock[];
}

export interface TestCase {
  name: string;
  file: string;
  at: LinePosition;
  env: string;
  /** The virtual clock's start, epoch ms. */
  clock: number;
  fixtures: Fixtures;
  mocks: Mocks;
  steps: TestStep[];
}

export type TestFileReading = { ok: true; cases: TestCase[] } | { ok: false; errors: ConfigError[] };

const headerMap = { type: 'object', additionalProperties: { type: 'string' } };
const fixturesSchema = {
  type: 'object',
  properties: {
    sql: { type: ['string', 'array'], items: { type: 'string' } },
    kv: { type: 'object' },
    maps: { type: 'object', additionalProperties: { type: 'object' } },
  },
  additionalProperties: false,
};
const answer = { status: { type: 'integer', minimum: 100, maximum: 599 }, headers: headerMap, body: {} };
const mocksSchema = {
  type: 'object',
  properties: {
    http: {
      type: 'array',
      items: {
        type: 'object',
        required: ['url'],
        properties: { verb: { type: 'string' }, url: { type: 'string', pattern: '^https?://' }, ...answer },
        additionalProperties: false,
      },
    },
    apis: {
      type: 'array',
      items: {
        type: 'object',
        required: ['api', 'path'],
        properties: {
          api: { type: 'string' },
          verb: { type: 'string' },
          path: { type: 'string', pattern: '^/' },
          ...answer,
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
};
const requestSchema = {
  type: 'object',
  required: ['path'],
  properties: {
    verb: { type: 'string' },
    path: { type: 'string', pattern: '^/' },
    query: { type: ['string', 'object'], additionalProperties: { type: ['string', 'number', 'boolean'] } },
    headers: headerMap,
    body: {},
    ip: { type: 'string' },
  },
  additionalProperties: false,
};
const expectSchema = {
  type: 'object',
  properties: {
    status: answer.status,
    headers: {
      type: 'object',
      additionalProperties: {
        type: ['string', 'null', 'object'],
        required: ['matches'],
        properties: { matches: { type: 'string' } },
        additionalProperties: false,
      },
    },
    body: {},
  },
  additionalProperties: false,
};
const stepSchema = {
  type: 'object',
  properties: { request: requestSchema, expect: expectSchema, advance: { type: ['string', 'integer'] } },
  additionalProperties: false,
};

/** The structure of a test file; what the schema cannot say (request or steps, durations) is checked after it. */
export const testFileSchema = {
  type: 'object',
  required: ['cases'],
  properties: {
    env: { type: 'string', minLength: 1 },
    clock: { type: 'string' },
    fixtures: fixturesSchema,
    mocks: mocksSchema,
    cases: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1 },
          fixtures: fixturesSchema,
          mocks: mocksSchema,
          ...stepSchema.properties,
          steps: { type: 'array', minItems: 1, items: stepSchema },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
};

let validator: ValidateFunction | null = null;

/** Reads one test file; `file` is how messages name it (`tests/notes.yaml`). */
export function readTestFile(text: string, file: string, defaults: { env: string; now: number }): TestFileReading {
  const reading = readYaml(text, YAML_LIMITS);
  const errorAt = (at: LinePosition, message: string): ConfigError => ({
    file,
    line: at.line,
    column: at.column,
    label: null,
    message,
  });
  if (!reading.ok)
    return {
      ok: false,
      errors: reading.problems.map((p) => errorAt(offsetToPosition(reading.lineCounter, p.offset), p.message)),
    };
  const where = (path: readonly PathKey[], at: 'key' | 'value' = 'value') =>
    positionOf(reading.doc, reading.lineCounter, reading.index, path, at);
  const errors = reading.problems.map((p) => errorAt(offsetToPosition(reading.lineCounter, p.offset), p.message));
  validator ??= schemaCompiler().compile(testFileSchema);
  if (!validator(reading.data)) {
    for (const error of validator.errors ?? []) errors.push(schemaError(error, where, errorAt));
    return { ok: false, errors: dedupe(errors) };
  }
  const data = reading.data as RawFile;
  const label = (path: readonly PathKey[], message: string) => errors.push(errorAt(where(path), message));

  let clock = defaults.now;
  if (data.clock !== undefined) {
    clock = Date.parse(data.clock);
    if (Number.isNaN(clock))
      label(
        ['clock'],
        `"clock" must be a date and time such as 2026-01-31T23:59:00Z (got ${describeValue(data.clock)})`,
      );
  }
  const env = data.env ?? defaults.env;
  const cases = data.cases.map((raw, index): TestCase => {
    const path = ['cases', index];
    const steps: TestStep[] = [];
    const single = raw.request !== undefined || raw.expect !== undefined || raw.advance !== undefined;
    if (single && raw.steps !== undefined)
      label(
        [...path, 'steps'],
        `case "${raw.name}" has both "request" and "steps": give one request with "request" and "expect", or a list of them under "steps"`,
      );
    const rawSteps = raw.steps?.map((step, i) => ({ step, at: [...path, 'steps', i] })) ?? [
      { step: raw as RawStep, at: path },
    ];
    for (const { step, at } of rawSteps) {
      if (step.advance !== undefined) {
        if (step.request !== undefined || step.expect !== undefined)
          label([...at, 'advance'], 'a step either sends a request or advances the clock, not both');
        const ms = durationMs(step.advance);
        if (ms === null)
          label(
            [...at, 'advance'],
            `"advance" must be a duration such as 61s, 5m, 2h, 1d or 1500 (ms) (got ${describeValue(step.advance)})`,
          );
        else steps.push({ kind: 'advance', ms, at: where([...at, 'advance']) });
      } else if (step.request === undefined) {
        label(
          at,
          raw.steps === undefined
            ? `case "${raw.name}" has no "request" (or "steps"): what should it send?`
            : 'this step has no "request": what should it send?',
        );
      } else {
        for (const [name, wanted] of Object.entries(step.expect?.headers ?? {})) {
          if (wanted === null || typeof wanted !== 'object') continue;
          try {
            new RegExp(wanted.matches, 'u');
          } catch (error) {
            label(
              [...at, 'expect', 'headers', name, 'matches'],
              `"matches" of header ${name} is not a regular expression: ${(error as Error).message}`,
            );
          }
        }
        steps.push({
          kind: 'request',
          request: testRequest(step.request),
          expect: step.expect ?? {},
          at: where([...at, 'request'], 'key'),
        });
      }
    }
    return {
      name: raw.name,
      file,
      at: where([...path, 'name']),
      env,
      clock,
      fixtures: mergeFixtures(data.fixtures, raw.fixtures),
      mocks: {
        http: [...(data.mocks?.http ?? []), ...(raw.mocks?.http ?? [])].map(httpMock),
        apis: [...(data.mocks?.apis ?? []), ...(raw.mocks?.apis ?? [])].map(apiMock),
      },
      steps,
    };
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, cases };
}

interface RawStep {
  request?: {
    verb?: string;
    path: string;
    query?: string | Record<string, string | number | boolean>;
    headers?: Record<string, string>;
    body?: unknown;
    ip?: string;
  };
  expect?: Expectation;
  advance?: string | number;
}
type RawFixtures = { sql?: string | string[]; kv?: Record<string, unknown>; maps?: Record<string, unknown> };
type RawAnswer = { verb?: string; status?: number; headers?: Record<string, string>; body?: unknown };
type RawMocks = { http?: Array<RawAnswer & { url: string }>; apis?: Array<RawAnswer & { api: string; path: string }> };
interface RawCase extends RawStep {
  name: string;
  fixtures?: RawFixtures;
  mocks?: RawMocks;
  steps?: RawStep[];
}
interface RawFile {
  env?: string;
  clock?: string;
  fixtures?: RawFixtures;
  mocks?: RawMocks;
  cases: RawCase[];
}

function testRequest(raw: NonNullable<RawStep['request']>): TestRequest {
  const query =
    typeof raw.query === 'string'
      ? raw.query.replace(/^\?/, '')
      : new URLSearchParams(
          Object.entries(raw.query ?? {}).map(([k, v]): [string, string] => [k, String(v)]),
        ).toString();
  return {
    verb: (raw.verb ?? 'GET').toUpperCase(),
    path: raw.path,
    query,
    headers: raw.headers ?? {},
    body: raw.body,
    ip: raw.ip ?? '127.0.0.1',
  };
}

function httpMock(raw: RawAnswer & { url: string }): HttpMock {
  return {
    verb: (raw.verb ?? 'GET').toUpperCase(),
    url: raw.url,
    status: raw.status ?? 200,
    headers: raw.headers ?? {},
    body: raw.body,
  };
}

function apiMock(raw: RawAnswer & { api: string; path: string }): ApiMock {
  return {
    api: raw.api,
    verb: (raw.verb ?? 'GET').toUpperCase(),
    path: raw.path,
    status: raw.status ?? 200,
    headers: raw.headers ?? {},
    body: raw.body,
  };
}

/** A case's own fixtures come after its file's: statements run after the file's, entries and Maps win. */
function mergeFixtures(file: RawFixtures | undefined, own: RawFixtures | undefined): Fixtures {
  const sql = (f: RawFixtures | undefined) => (f?.sql === undefined ? [] : Array.isArray(f.sql) ? f.sql : [f.sql]);
  return {
    sql: [...sql(file), ...sql(own)],
    kv: { ...(file?.kv ?? {}), ...(own?.kv ?? {}) },
    maps: mergedMaps(file?.maps ?? {}, own?.maps ?? {}),
  };
}

/** Maps with `over`'s values merged into each map of the same name (one level, as Maps/<env>/ over Maps/). */
export function mergedMaps(
  maps: Readonly<Record<string, unknown>>,
  over: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...maps };
  for (const [name, value] of Object.entries(over))
    merged[name] = { ...((maps[name] as object | undefined) ?? {}), ...(value as object) };
  return merged;
}

function schemaError(
  error: ErrorObject,
  where: (path: readonly PathKey[], at?: 'key' | 'value') => LinePosition,
  errorAt: (at: LinePosition, message: string) => ConfigError,
): ConfigError {
  const path: PathKey[] = pointerToPath(error.instancePath).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  const params = error.params as Record<string, unknown>;
  const named = path.length === 0 ? 'the file' : `"${path.join('.')}"`;
  const got = ` (got ${describeValue(error.data)})`;
  switch (error.keyword) {
    case 'additionalProperties': {
      const field = String(params.additionalProperty);
      const allowed = Object.keys((error.parentSchema as { properties?: object }).properties ?? {}).join(', ');
      return errorAt(where([...path, field], 'key'), `unknown field "${field}" in ${named} (allowed: ${allowed})`);
    }
    case 'required':
      return errorAt(where(path), `${named} needs the field "${String(params.missingProperty)}"`);
    case 'type':
      return errorAt(where(path), `${named} must be ${String(params.type).replace(',', ' or ')}${got}`);
    case 'pattern':
      return errorAt(
        where(path),
        `${named} must start with ${String(params.pattern) === '^/' ? '/' : 'http:// or https://'}${got}`,
      );
    case 'minItems':
      return errorAt(where(path), `${named} must list at least one item`);
    default:
      return errorAt(where(path), `${named} ${error.message ?? 'is not valid'}${got}`);
  }
}

function dedupe(errors: ConfigError[]): ConfigError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const id = `${e.line}:${e.column}:${e.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
