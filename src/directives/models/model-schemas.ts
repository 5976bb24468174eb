/**
 * Maps used as JSON Schemas (draft 2020-12) by ValidateModel and LoadAndValidateModel: the whole
 * map is the schema. Tenant schemas are untrusted input (ajv's own security notes): they are
 * checked against the meta-schema, `pattern`s that nest repetition are refused (pattern-guard.ts),
 * `$ref`s are never fetched (only references inside the schema resolve), refs are not inlined
 * (inlining can blow up the generated code), and their size and depth are those of Maps.
 * Compiling happens in the deploy worker (to report errors) and in the API's own actor thread,
 * once per map per thread of a release; never in the router.
 */
import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { nestedRepetition } from './pattern-guard.js';

export type CompiledModel =
  { ok: true; validate: ValidateFunction } | { ok: false; reason: 'missing' | 'invalid'; message: string };

const require = createRequire(import.meta.url);

/** A fresh validator set: ajv and ajv-formats are loaded on first use, in the thread that uses them. */
function newAjv(): Ajv2020 {
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = (require('ajv-formats') as { default: (ajv: Ajv2020) => Ajv2020 }).default;
  const regExp = Object.assign(
    (pattern: string, flags: string) => {
      const problem = nestedRepetition(pattern);
      if (problem !== null) throw new Error(`pattern ${problem}`);
      return new RegExp(pattern, flags);
    },
    { code: 'new RegExp' },
  );
  // strict: false ignores unknown keywords, as JSON Schema says; logger: false keeps ajv off stdout.
  return addFormats(new Ajv({ strict: false, allErrors: false, inlineRefs: false, logger: false, code: { regExp } }));
}

/** The schemas of one release's maps, each compiled once, on first use (failures too are kept). */
export class ModelSchemas {
  private ajv: Ajv2020 | null = null;
  private readonly compiled = new Map<string, CompiledModel>();

  constructor(private readonly maps: Readonly<Record<string, unknown>>) {}

  get(name: string): CompiledModel {
    let model = this.compiled.get(name);
    if (model === undefined) {
      model = this.compile(name);
      this.compiled.set(name, model);
    }
    return model;
  }

  private compile(name: string): CompiledModel {
    if (!Object.hasOwn(this.maps, name))
      return {
        ok: false,
        reason: 'missing',
        message: `there is no map "${name}" (Maps/${name}.json) to validate against`,
      };
    const schema = this.maps[name];
    if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
      return {
        ok: false,
        reason: 'invalid',
        message: `map "${name}" is not a JSON Schema: a schema is an object or a boolean`,
      };
    }
    try {
      this.ajv ??= newAjv();
      return { ok: true, validate: this.ajv.compile(schema as object) };
    } catch (error) {
      return {
        ok: false,
        reason: 'invalid',
        message: `map "${name}" is not a valid JSON Schema: ${oneLine((error as Error).message)}`,
      };
    }
  }
}

const MAX_MESSAGE = 300;

/**
 * ajv's first error as one line: the model's name and the instance path (a JSON pointer), then
 * ajv's message, with the property or the allowed values ajv leaves out of it.
 * `person/age must be integer`, `person must NOT have additional properties: "nickname"`.
 */
export function describeInvalid(name: string, errors: readonly ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (first === undefined) return `${name} is not valid`;
  let text = `${name}${first.instancePath} ${first.message ?? 'is not valid'}`;
  const params = first.params as { additionalProperty?: string; allowedValues?: unknown[]; allowedValue?: unknown };
  if (first.keyword === 'additionalProperties' && params.additionalProperty !== undefined)
    text += `: ${JSON.stringify(params.additionalProperty)}`;
  if (first.keyword === 'enum' && Array.isArray(params.allowedValues))
    text += `: ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if (first.keyword === 'const') text += `: ${JSON.stringify(params.allowedValue)}`;
  return oneLine(text);
}

/** Control characters escaped (a property name may hold a newline), and at most MAX_MESSAGE characters. */
function oneLine(text: string): string {
  const flat = text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return flat.length > MAX_MESSAGE ? `${flat.slice(0, MAX_MESSAGE - 1)}…` : flat;
}
