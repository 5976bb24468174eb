/**
 * The JSON Schemas of each built-in directive's `params`, made to accept an alias (`$.…`) wherever
 * a value goes, and the translation of ajv's errors about parameters into sentences a user
 * understands. The structure of api.yaml around them is checked in api-schema.ts.
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { ParamSchema } from '../../engine/directive-types.js';
import { dedupeIssues, describeValue, schemaCompiler, type SchemaIssue } from './api-schema.js';
import { pointerToPath, type PathKey } from './yaml-positions.js';

/** What an alias looks like to the schema: any string starting with `$.` (its form is checked apart). */
export const ALIAS_SCHEMA = Object.freeze({ type: 'string', pattern: '^\\$\\.' });

/** The `anyOf: [original, alias]` nodes made by {@link acceptAliases}, to tell them from a directive's own anyOf. */
const aliasWrappers = new WeakSet<object>();
/** Compiled parameter validators, by the directive's own `params` object: each is compiled once. */
const paramValidators = new WeakMap<object, ValidateFunction>();

/**
 * A copy of a directive's parameter schema in which every place that takes a value also takes an
 * alias: each value subschema S becomes `anyOf: [S', {type: string, pattern: ^\$\.}]`, recursively
 * (inside properties, list items, map values…). `false` (no such field) and `{}` stay as they are.
 */
export function acceptAliases(schema: ParamSchema): Record<string, unknown> {
  return inner(schema);
}

function wrapValue(schema: unknown): unknown {
  if (!isObject(schema) || Object.keys(schema).length === 0) return schema;
  const wrapper = { anyOf: [inner(schema), ALIAS_SCHEMA] };
  aliasWrappers.add(wrapper);
  return wrapper;
}

const SCHEMA_MAPS = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions'];
const SCHEMA_ONE = [
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'additionalItems',
  'unevaluatedItems',
  'contains',
];
const SCHEMA_LISTS = ['prefixItems'];
const COMBINATORS = ['anyOf', 'oneOf', 'allOf'];

function inner(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...schema };
  for (const k of SCHEMA_MAPS) {
    const map = schema[k];
    if (isObject(map)) out[k] = Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, wrapValue(sub)]));
  }
  for (const k of SCHEMA_ONE) {
    const sub = schema[k];
    if (Array.isArray(sub)) out[k] = sub.map(wrapValue);
    else if (isObject(sub)) out[k] = wrapValue(sub);
  }
  for (const k of SCHEMA_LISTS) {
    const list = schema[k];
    if (Array.isArray(list)) out[k] = list.map(wrapValue);
  }
  // The members of a combinator describe the same value: an alias is accepted around them, once.
  for (const k of COMBINATORS) {
    const list = schema[k];
    if (Array.isArray(list)) out[k] = list.map((sub) => (isObject(sub) ? inner(sub) : sub));
  }
  return out;
}

/** The validator of a directive's parameters (aliases accepted), compiled on first use and cached. */
export function paramValidator(schema: ParamSchema): ValidateFunction {
  let validate = paramValidators.get(schema);
  if (validate === undefined) {
    validate = schemaCompiler().compile(acceptAliases(schema));
    paramValidators.set(schema, validate);
  }
  return validate;
}

/** Checks an entry's parameters against its directive's schema; issue paths are relative to the parameters. */
export function paramIssues(directive: string, schema: ParamSchema, params: Record<string, unknown>): SchemaIssue[] {
  const validate = paramValidator(schema);
  if (validate(params)) return [];
  return dedupeIssues(simplify(validate.errors ?? []).map((error) => paramIssue(directive, schema, error)));
}

/**
 * Keeps the errors that explain the problem: drops those of the alias branches and of our
 * wrappers, and turns a directive's own failed anyOf/oneOf into the errors of its closest branch
 * (or into one "must be A or B" when no branch had even the right type).
 */
function simplify(errors: ErrorObject[]): ErrorObject[] {
  const kept = errors.filter(
    (e) =>
      e.parentSchema !== ALIAS_SCHEMA &&
      !(e.keyword === 'anyOf' && e.parentSchema !== undefined && aliasWrappers.has(e.parentSchema)) &&
      e.keyword !== 'if',
  );
  const combinators = kept
    .filter(
      (e) =>
        (e.keyword === 'anyOf' || e.keyword === 'oneOf') &&
        (e.params as Record<string, unknown>).passingSchemas == null,
    )
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  const members = combinatorMembers(kept, combinators);

  // The errors still in the list, in list order: a sequence number per (re-)insertion, since the
  // closest branch's errors move to the end of the list, as if removed and pushed again.
  const order = new Map<ErrorObject, number>();
  let next = 0;
  const append = (e: ErrorObject) => order.set(e, next++);
  kept.forEach(append);

  for (const combinator of combinators) {
    if (!order.has(combinator)) continue;
    const prefix = `${combinator.schemaPath}/`;
    const subs = (members.get(combinator) ?? [])
      .filter((e) => order.has(e))
      .sort((a, b) => order.get(a)! - order.get(b)!);
    const branches = new Map<string, ErrorObject[]>();
    for (const e of subs) {
      const index = e.schemaPath.slice(prefix.length).split('/')[0] ?? '';
      const branch = branches.get(index);
      if (branch === undefined) branches.set(index, [e]);
      else branch.push(e);
    }
    const wrongType = (index: string, errs: ErrorObject[]) =>
      errs.some(
        (e) =>
          e.keyword === 'type' &&
          e.instancePath === combinator.instancePath &&
          e.schemaPath === `${prefix}${index}/type`,
      );
    const closest = [...branches].find(([index, errs]) => !wrongType(index, errs));

    order.delete(combinator);
    for (const e of subs) order.delete(e);
    if (closest !== undefined) {
      closest[1].forEach(append);
    } else {
      const types = new Set<string>();
      for (const e of subs) {
        if (e.keyword === 'type' && e.instancePath === combinator.instancePath) {
          const t = (e.params as { type: string | string[] }).type;
          for (const one of Array.isArray(t) ? t : [t]) types.add(one);
        }
      }
      append({ ...combinator, keyword: types.size > 0 ? 'type' : combinator.keyword, params: { type: [...types] } });
    }
  }
  return [...order.keys()];
}

/**
 * For each combinator, the errors under it: their schema path continues its own and their value is
 * its value or inside it. Found by looking up each error's path prefixes (a few per error) rather
 * than comparing every error with every combinator: a map of 10 000 values that each fail an anyOf
 * has 10 000 combinators.
 */
function combinatorMembers(
  errors: readonly ErrorObject[],
  combinators: readonly ErrorObject[],
): Map<ErrorObject, ErrorObject[]> {
  const bySchemaPath = new Map<string, Map<string, ErrorObject[]>>();
  for (const c of combinators) {
    let byInstance = bySchemaPath.get(c.schemaPath);
    if (byInstance === undefined) bySchemaPath.set(c.schemaPath, (byInstance = new Map()));
    const same = byInstance.get(c.instancePath);
    if (same === undefined) byInstance.set(c.instancePath, [c]);
    else same.push(c);
  }
  const members = new Map<ErrorObject, ErrorObject[]>();
  for (const e of errors) {
    for (let cut = e.schemaPath.indexOf('/'); cut >= 0; cut = e.schemaPath.indexOf('/', cut + 1)) {
      const byInstance = bySchemaPath.get(e.schemaPath.slice(0, cut));
      if (byInstance === undefined) continue;
      for (const instancePath of enclosingPaths(e.instancePath)) {
        for (const c of byInstance.get(instancePath) ?? []) {
          const list = members.get(c);
          if (list === undefined) members.set(c, [e]);
          else list.push(e);
        }
      }
    }
  }
  return members;
}

/** A JSON pointer and every pointer above it: `/a/b` → `/a/b`, `/a`, ``. */
function enclosingPaths(pointer: string): string[] {
  const out = [pointer];
  for (let cut = pointer.lastIndexOf('/'); cut >= 0; cut = pointer.lastIndexOf('/', cut - 1)) {
    out.push(pointer.slice(0, cut));
    if (cut === 0) break;
  }
  return out;
}

function paramIssue(directive: string, schema: ParamSchema, error: ErrorObject): SchemaIssue {
  const path: PathKey[] = pointerToPath(error.instancePath).map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  const params = error.params as Record<string, unknown>;
  const name = path.length === 0 ? '' : paramName(path);
  const subject = `parameter "${name}" of ${directive}`;
  const got = ` (got ${describeValue(error.data)})`;

  switch (error.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      if (path.length === 0) return { path, at: 'key', message: `parameter "${missing}" of ${directive} is required` };
      return { path, at: 'value', message: `field "${missing}" of ${subject} is required` };
    }
    case 'additionalProperties': {
      const extra = String(params.additionalProperty);
      if (path.length === 0) {
        const known = Object.keys(schema.properties);
        const patterns = Object.keys(schema.patternProperties ?? {});
        const hint =
          known.length === 0 && patterns.length === 0
            ? `${directive} takes no parameters`
            : `known: ${[...known, ...patterns.map((p) => `names matching ${p}`)].join(', ')}`;
        return { path: [extra], at: 'key', message: `unknown parameter "${extra}" for ${directive} (${hint})` };
      }
      return { path: [...path, extra], at: 'key', message: `unknown field "${extra}" in ${subject}` };
    }
    case 'type': {
      const t = params.type as string | string[];
      return { path, at: 'value', message: `${subject} must be ${typeWords(Array.isArray(t) ? t : [t])}${got}` };
    }
    case 'minimum':
    case 'exclusiveMinimum':
      return {
        path,
        at: 'value',
        message: `${subject} must be ${error.keyword === 'minimum' ? 'at least' : 'more than'} ${String(params.limit)}${got}`,
      };
    case 'maximum':
    case 'exclusiveMaximum':
      return {
        path,
        at: 'value',
        message: `${subject} must be ${error.keyword === 'maximum' ? 'at most' : 'less than'} ${String(params.limit)}${got}`,
      };
    case 'minLength':
      return {
        path,
        at: 'value',
        message:
          params.limit === 1
            ? `${subject} must not be empty`
            : `${subject} must be at least ${String(params.limit)} characters long`,
      };
    case 'maxLength':
      return { path, at: 'value', message: `${subject} must be at most ${String(params.limit)} characters long` };
    case 'pattern':
      return { path, at: 'value', message: `${subject} must match the pattern ${String(params.pattern)}${got}` };
    case 'enum':
      return {
        path,
        at: 'value',
        message: `${subject} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}${got}`,
      };
    case 'const':
      return { path, at: 'value', message: `${subject} must be ${JSON.stringify(params.allowedValue)}${got}` };
    case 'minItems':
      return { path, at: 'value', message: `${subject} must have at least ${String(params.limit)} item(s)` };
    case 'maxItems':
      return { path, at: 'value', message: `${subject} must have at most ${String(params.limit)} item(s)` };
    default:
      return {
        path,
        at: path.length === 0 ? 'key' : 'value',
        message: `${path.length === 0 ? `parameters of ${directive}` : subject} ${error.message ?? 'are not valid'}`,
      };
  }
}

/** `headers.content-type`, `enable[0]`. */
function paramName(path: readonly PathKey[]): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');
}

function typeWords(types: string[]): string {
  const words = types.map((t) => (t === 'array' ? 'list' : t === 'object' ? 'map' : t));
  if (words.length <= 1) return words[0] ?? 'of another type';
  return `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
