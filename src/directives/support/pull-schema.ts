/**
 * Pull's check of an answer against a JSON Schema kept in the API's Maps (the original's Pull with
 * `target` validated against `Maps/<target>.json`). Each schema is compiled once per release per
 * actor thread (a `resource` of the runtime), never per request.
 */
import { createRequire } from 'node:module';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import type { DirectiveContext } from '../../engine/context.js';
import { Errors } from '../../shared/errors.js';

const require = createRequire(import.meta.url);
let shared: Ajv2020 | null = null;

/** Loaded on first use, in the thread of an API that checks a Pull's answer: every spare thread would pay ~100 ms for it. */
function ajv(): Ajv2020 {
  if (shared !== null) return shared;
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  // Schemas are tenant input: no console output, formats left to ValidateModel.
  return (shared = new Ajv({ strict: false, allErrors: false, logger: false, validateFormats: false }));
}

type Compiled = { validate: ValidateFunction } | { error: string };

/** The map a Pull checks its answer against: `schema` names it (false: none); by default the map named like `target`, when there is one. */
export function schemaName(
  ctx: DirectiveContext,
  schema: string | boolean | undefined,
  target: string | undefined,
): string | null {
  if (schema === false) return null;
  if (typeof schema === 'string') return schema;
  if (target === undefined) return null;
  if (schema === true) return target;
  return Object.hasOwn(ctx.api.maps, target) ? target : null;
}

/** Throws 502 when `value` does not match the schema `Maps/<name>.json` (500 when there is no such map or it does not compile). */
export function checkAgainstSchema(ctx: DirectiveContext, name: string, value: unknown, where: string): void {
  const compiled = ctx.api.resource<Compiled | null>(`pull-schema:${name}`, () => compile(ctx, name));
  if (compiled === null) throw Errors.pullSchemaMissing(name, name);
  if ('error' in compiled) throw Errors.pullSchemaBroken(name, compiled.error);
  if (compiled.validate(value)) return;
  const first = compiled.validate.errors?.[0];
  const detail =
    first === undefined
      ? 'it is not valid'
      : `${first.instancePath === '' ? 'the answer' : first.instancePath} ${first.message ?? 'is not valid'}`;
  throw Errors.pullSchemaMismatch(where, name, detail);
}

function compile(ctx: DirectiveContext, name: string): Compiled | null {
  if (!Object.hasOwn(ctx.api.maps, name)) return null;
  const schema = ctx.api.maps[name];
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema)))
    return { error: 'a schema is an object (or true/false)' };
  try {
    // The maps are frozen and shared; ajv may annotate what it compiles, so it gets a copy.
    return { validate: ajv().compile(structuredClone(schema) as object) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
