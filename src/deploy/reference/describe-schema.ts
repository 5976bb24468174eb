/**
 * Words for a parameter's JSON Schema in the reference docs (`list of string`, `integer 400–599`),
 * and a value that fits it, for an example made when a directive declares none.
 */

type Schema = Record<string, unknown>;

const TYPE_WORDS: Record<string, string> = { array: 'list', object: 'map', null: 'null' };

/** `string`, `integer 1–60`, `list of string (1–20 items)`, `"text" or "json"`, `any`. */
export function describeSchema(schema: unknown): string {
  if (!isObject(schema) || Object.keys(schema).length === 0) return 'any';
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' or ');
  if ('const' in schema) return JSON.stringify(schema.const);
  const combined = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(combined)) return combined.map(describeSchema).join(' or ');

  const types = Array.isArray(schema.type)
    ? (schema.type as string[])
    : typeof schema.type === 'string'
      ? [schema.type]
      : [];
  const words = types.map((t) => {
    if (t === 'array')
      return `list${isObject(schema.items) && Object.keys(schema.items).length > 0 ? ` of ${describeSchema(schema.items)}` : ''}`;
    if (t === 'object')
      return `map${isObject(schema.additionalProperties) ? ` of ${describeSchema(schema.additionalProperties)}` : ''}`;
    return TYPE_WORDS[t] ?? t;
  });
  const base = words.length === 0 ? 'any' : words.join(' or ');
  const limits = [
    range(schema.minimum, schema.exclusiveMinimum, schema.maximum, schema.exclusiveMaximum),
    lengths(schema),
    items(schema),
  ];
  if (typeof schema.pattern === 'string') limits.push(`matching \`${schema.pattern}\``);
  const extra = limits.filter((l) => l !== '');
  return extra.length === 0 ? base : `${base} (${extra.join(', ')})`;
}

function range(min: unknown, exclusiveMin: unknown, max: unknown, exclusiveMax: unknown): string {
  const low = typeof min === 'number' ? `${min}` : typeof exclusiveMin === 'number' ? `more than ${exclusiveMin}` : '';
  const high = typeof max === 'number' ? `${max}` : typeof exclusiveMax === 'number' ? `less than ${exclusiveMax}` : '';
  if (low !== '' && high !== '')
    return /^\d/.test(low) && /^\d/.test(high) ? `${low}–${high}` : `${low}, at most ${high}`;
  if (low !== '') return /^\d/.test(low) ? `at least ${low}` : low;
  return high === '' ? '' : /^\d/.test(high) ? `at most ${high}` : high;
}

function lengths(schema: Schema): string {
  const { minLength: min, maxLength: max } = schema;
  if (min === 1 && typeof max === 'number') return `non-empty, at most ${max} characters`;
  if (min === 1) return 'non-empty';
  if (typeof min === 'number' && typeof max === 'number') return `${min}–${max} characters`;
  if (typeof min === 'number') return `at least ${min} characters`;
  return typeof max === 'number' ? `at most ${max} characters` : '';
}

function items(schema: Schema): string {
  const { minItems: min, maxItems: max } = schema;
  if (typeof min === 'number' && typeof max === 'number') return `${min}–${max} items`;
  if (typeof min === 'number') return `at least ${min} item${min === 1 ? '' : 's'}`;
  return typeof max === 'number' ? `at most ${max} items` : '';
}

/**
 * A value the schema accepts, for a generated example: a declared default or example, the first
 * allowed value, the lowest number, or for a free string the parameter's own name.
 */
export function sampleValue(name: string, schema: unknown): unknown {
  if (!isObject(schema)) return name;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const combined = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(combined) && combined.length > 0) return sampleValue(name, combined[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number'
        ? schema.minimum
        : typeof schema.exclusiveMinimum === 'number'
          ? Math.floor(schema.exclusiveMinimum) + 1
          : 1;
    case 'boolean':
      return true;
    case 'array':
      return typeof schema.minItems === 'number' && schema.minItems > 0
        ? Array.from({ length: schema.minItems }, () => sampleValue(name, schema.items))
        : [];
    case 'object':
      return {};
    case 'null':
      return null;
    default:
      // A string with a pattern the name may not match: an alias, which every parameter accepts.
      return typeof schema.pattern === 'string' ? `$.memory.${name}` : name;
  }
}

function isObject(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
