/**
 * A model's first validation error in the original's words, for APIs with `compat: hefesto`: the
 * original validated with Opis JSON Schema (PHP, draft 2020-12) and answered its top-level error's
 * message, e.g. `The required properties (age) are missing`, or, for a failure inside a property,
 * the keyword of the schema's root that led to it: `The properties must match schema: age`.
 * Worded from ajv's first error (the same one Anvil's own message describes): its schema path
 * names the root keyword, and the value gives what Opis puts in the message (a type name, a
 * length, a count). Where two keywords fail at once, ajv's order of checking decides which is
 * named; it differs from Opis's in rare cases. A `$ref` at the root reads as the referenced
 * schema's own error (ajv compiles a ref apart and reports paths inside it), where Opis says
 * "The data must match $ref" (docs/migrating.md).
 */
import type { ErrorObject } from 'ajv/dist/2020.js';

/** Null when the error is one this does not word (the caller keeps Anvil's message then). */
export function originalMessage(error: ErrorObject, value: unknown, schema: unknown): string | null {
  const path = error.schemaPath.replace(/^#\/?/, '').split('/').map(schemaPathPart);
  const [root = ''] = path;
  const nested = path.length > 1 && !(path.length === 2 && root === error.keyword);
  if (nested) return nestedMessage(path, error, value, schema);
  // A schema path at the root for a value below it: the error came through a $ref (compiled apart,
  // its paths start again at its own root), so the root keyword is found from the value's path.
  if (error.instancePath !== '') return throughRef(error.instancePath, value, schema);
  return leafMessage(error, valueAt(value, error.instancePath), value, schema);
}

function throughRef(pointer: string, value: unknown, schema: unknown): string | null {
  const first = unescapePointer(pointer.split('/')[1] ?? '');
  const root = (schema ?? {}) as {
    properties?: Record<string, unknown>;
    patternProperties?: Record<string, unknown>;
    prefixItems?: unknown[];
  };
  if (Array.isArray(value))
    return Number(first) < (root.prefixItems?.length ?? 0)
      ? 'Array items must match corresponding schemas'
      : 'All array items must match schema';
  if (Object.hasOwn(root.properties ?? {}, first)) return `The properties must match schema: ${first}`;
  const pattern = Object.keys(root.patternProperties ?? {}).find((p) => new RegExp(p, 'u').test(first));
  if (pattern !== undefined)
    return `Object properties that match pattern '${pattern}' must also match pattern's schema`;
  return `All additional object properties must match schema: ${extraProperties(value, schema).join(', ')}`;
}

/** The keywords that apply subschemas, worded the same whether ajv reports them or a failure inside them. */
const APPLICATORS: Readonly<Record<string, string>> = {
  contains: 'At least one array item must match schema',
  allOf: 'The data should match all schemas',
  anyOf: 'The data should match at least one schema',
  oneOf: 'The data should match exactly one schema',
  not: 'The data must not match schema',
};

function nestedMessage(path: readonly string[], error: ErrorObject, value: unknown, schema: unknown): string | null {
  const [root = '', second] = path;
  switch (root) {
    case 'properties':
      if (error.keyword === 'false schema' && path.length === 3) return `Property '${second}' is not allowed`;
      return `The properties must match schema: ${second}`;
    case 'additionalProperties':
      return `All additional object properties must match schema: ${extraProperties(value, schema).join(', ')}`;
    case 'patternProperties':
      return `Object properties that match pattern '${second}' must also match pattern's schema`;
    case 'items':
      return 'All array items must match schema';
    case 'prefixItems':
      return 'Array items must match corresponding schemas';
    case 'contains':
    case 'allOf':
    case 'anyOf':
    case 'oneOf':
    case 'not':
      return APPLICATORS[root] ?? null;
    case 'then':
    case 'else':
      return error.keyword === 'false schema' && path.length === 2
        ? `The data is never valid on '${root}' branch`
        : `The data is not valid on '${root}' branch`;
    case 'propertyNames':
      return `Property '${String((error as { propertyName?: string }).propertyName ?? (error.params as { propertyName?: string }).propertyName ?? '')}' must match schema`;
    case 'dependentSchemas':
      return `The object must match dependency schema defined on property '${second}'`;
    default:
      return null;
  }
}

function leafMessage(error: ErrorObject, data: unknown, value: unknown, schema: unknown): string | null {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `The required properties (${String(params.missingProperty)}) are missing`;
    case 'type':
      return `The data (${jsonType(data)}) must match the type: ${String(params.type).split(',').join(', ')}`;
    case 'enum':
      return 'The data should match one item from enum';
    case 'const':
      return 'The data must match the const value';
    case 'format':
      return `The data must match the '${String(params.format)}' format`;
    case 'pattern':
      return `The string should match pattern: ${String(params.pattern)}`;
    case 'minLength':
      return `Minimum string length is ${phpString(params.limit)}, found ${[...String(data)].length}`;
    case 'maxLength':
      return `Maximum string length is ${phpString(params.limit)}, found ${[...String(data)].length}`;
    case 'minimum':
      return `Number must be greater than or equal to ${phpString(params.limit)}`;
    case 'maximum':
      return `Number must be lower than or equal to ${phpString(params.limit)}`;
    case 'exclusiveMinimum':
      return `Number must be greater than ${phpString(params.limit)}`;
    case 'exclusiveMaximum':
      return `Number must be lower than ${phpString(params.limit)}`;
    case 'multipleOf':
      return `Number must be a multiple of ${phpString(params.multipleOf)}`;
    case 'minItems':
      return `Array should have at least ${phpString(params.limit)} items, ${Array.isArray(data) ? data.length : 0} found`;
    case 'maxItems':
      return `Array should have at most ${phpString(params.limit)} items, ${Array.isArray(data) ? data.length : 0} found`;
    case 'uniqueItems':
      return 'Array must have unique items';
    case 'minProperties':
      return `Object must have at least ${phpString(params.limit)} properties, ${countKeys(data)} found`;
    case 'maxProperties':
      return `Object must have at most ${phpString(params.limit)} properties, ${countKeys(data)} found`;
    case 'additionalProperties':
      return `Additional object properties are not allowed: ${extraProperties(value, schema).join(', ')}`;
    case 'dependentRequired':
      return `'${String(params.missingProperty)}' property is required by '${String(params.property)}' property`;
    case 'false schema':
      return 'Data not allowed';
    case 'contains': {
      // ajv reports minContains/maxContains as `contains` with their bounds.
      const { minContains, maxContains } = params as { minContains?: number; maxContains?: number };
      if (maxContains !== undefined && maxContains !== Infinity)
        return `At most ${phpString(maxContains)} array items must match schema`;
      if (minContains !== undefined && minContains > 1)
        return `At least ${phpString(minContains)} array items must match schema`;
      return APPLICATORS.contains!;
    }
    default:
      return APPLICATORS[error.keyword] ?? null;
  }
}

/** Opis's name of a JSON type: a whole number is an integer, whatever its notation. */
function jsonType(data: unknown): string {
  if (data === null) return 'null';
  if (Array.isArray(data)) return 'array';
  if (typeof data === 'number') return Number.isInteger(data) ? 'integer' : 'number';
  return typeof data === 'object' ? 'object' : typeof data;
}

/** A number as PHP's (string) cast writes it: whole numbers as they are, others to 14 significant digits. */
function phpString(value: unknown): string {
  if (typeof value !== 'number') return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e15) return String(value);
  // PHP's %.14G: exponent form below 1e-4 and from 1e15 on, a mantissa always with a decimal point.
  const magnitude = Math.abs(value);
  if (value !== 0 && (magnitude < 1e-4 || magnitude >= 1e15)) {
    const [mantissa = '', exponent = ''] = value.toExponential(13).split('e');
    const trimmed = mantissa.replace(/\.?0+$/, '');
    return `${trimmed.includes('.') ? trimmed : `${trimmed}.0`}E${exponent.startsWith('-') ? exponent : `+${exponent.replace('+', '')}`}`;
  }
  return String(Number(value.toPrecision(14)));
}

function countKeys(data: unknown): number {
  return data !== null && typeof data === 'object' ? Object.keys(data).length : 0;
}

/** The value's own keys that neither `properties` nor `patternProperties` of the schema's root covers. */
function extraProperties(value: unknown, schema: unknown): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const root = (schema ?? {}) as { properties?: Record<string, unknown>; patternProperties?: Record<string, unknown> };
  // The patterns passed ajv's compile and pattern-guard.ts (no nested repetition) already.
  const patterns = Object.keys(root.patternProperties ?? {}).map((p) => new RegExp(p, 'u'));
  return Object.keys(value).filter(
    (key) => !Object.hasOwn(root.properties ?? {}, key) && !patterns.some((p) => p.test(key)),
  );
}

function valueAt(value: unknown, pointer: string): unknown {
  let at = value;
  for (const part of pointer.split('/').slice(1).map(unescapePointer)) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** A segment of ajv's schema path: a JSON pointer segment, URI-encoded. */
function schemaPathPart(part: string): string {
  let decoded = part;
  try {
    decoded = decodeURIComponent(part);
  } catch {
    // not URI-encoded after all: kept as it is
  }
  return unescapePointer(decoded);
}

function unescapePointer(part: string): string {
  return part.replace(/~1/g, '/').replace(/~0/g, '~');
}
