import { describe, expect, it } from 'vitest';
import { ModelSchemas } from '../../src/directives/models/model-schemas.js';
import { originalMessage } from '../../src/directives/models/original-wording.js';

// Under `compat: hefesto` a model's 400 says what the original's validator (Opis JSON Schema 2.x)
// said: its top-level error's message, placeholders filled in as its ErrorFormatter fills them.

const PERSON = {
  type: 'object',
  required: ['name', 'age'],
  properties: {
    name: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[A-Z]' },
    age: { type: 'integer', minimum: 0, maximum: 150.5 },
    email: { type: 'string', format: 'email' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2, uniqueItems: true },
    role: { enum: ['admin', 'user'] },
    kind: { const: 'person' },
    nick: { type: ['string', 'null'] },
  },
  additionalProperties: false,
};

function worded(schema: unknown, value: unknown): string | null {
  const model = new ModelSchemas({ m: schema }).get('m');
  if (!model.ok) throw new Error(model.message);
  expect(model.validate(value)).toBe(false);
  return originalMessage(model.validate.errors![0]!, value, schema);
}

describe("the original's validation wording", () => {
  it('at the root: required, type, additional properties, counts', () => {
    expect(worded(PERSON, { name: 'Ada' })).toBe('The required properties (age) are missing');
    expect(worded(PERSON, [])).toBe('The data (array) must match the type: object');
    expect(worded(PERSON, { name: 'Ada', age: 3, x: 1, y: 2 })).toBe(
      'Additional object properties are not allowed: x, y',
    );
    expect(worded({ type: 'object', minProperties: 2 }, { a: 1 })).toBe(
      'Object must have at least 2 properties, 1 found',
    );
    expect(worded({ type: 'integer' }, 1.5)).toBe('The data (number) must match the type: integer');
    expect(worded({ type: 'string' }, 5)).toBe('The data (integer) must match the type: string');
    expect(worded(false, 1)).toBe('Data not allowed');
  });

  it('inside a property: the root keyword that led there, naming the property', () => {
    const person = (fields: object) => ({ name: 'Ada', age: 30, ...fields });
    expect(worded(PERSON, person({ age: 'old' }))).toBe('The properties must match schema: age');
    expect(worded(PERSON, person({ name: 'A' }))).toBe('The properties must match schema: name');
    expect(worded(PERSON, person({ tags: [] }))).toBe('The properties must match schema: tags');
    expect(worded(PERSON, person({ nick: 1 }))).toBe('The properties must match schema: nick');
  });

  it("each keyword's own words when it fails at the root", () => {
    expect(worded({ type: 'string', minLength: 3 }, 'é!')).toBe('Minimum string length is 3, found 2');
    expect(worded({ type: 'string', maxLength: 1 }, 'ab')).toBe('Maximum string length is 1, found 2');
    expect(worded({ type: 'string', pattern: '^[A-Z]' }, 'ab')).toBe('The string should match pattern: ^[A-Z]');
    expect(worded({ type: 'string', format: 'email' }, 'nope')).toBe("The data must match the 'email' format");
    expect(worded({ minimum: 0 }, -1)).toBe('Number must be greater than or equal to 0');
    expect(worded({ maximum: 150.5 }, 151)).toBe('Number must be lower than or equal to 150.5');
    expect(worded({ exclusiveMinimum: 0.1 }, 0)).toBe('Number must be greater than 0.1');
    expect(worded({ exclusiveMaximum: 10 }, 10)).toBe('Number must be lower than 10');
    expect(worded({ multipleOf: 3 }, 4)).toBe('Number must be a multiple of 3');
    expect(worded({ minItems: 2 }, [1])).toBe('Array should have at least 2 items, 1 found');
    expect(worded({ maxItems: 1 }, [1, 2])).toBe('Array should have at most 1 items, 2 found');
    expect(worded({ uniqueItems: true }, [1, 1])).toBe('Array must have unique items');
    expect(worded({ enum: ['a'] }, 'b')).toBe('The data should match one item from enum');
    expect(worded({ const: 'a' }, 'b')).toBe('The data must match the const value');
    expect(worded({ type: ['string', 'null'] }, 1)).toBe('The data (integer) must match the type: string, null');
    expect(worded({ dependentRequired: { card: ['cvc'] } }, { card: 1 })).toBe(
      "'cvc' property is required by 'card' property",
    );
  });

  it('inside items, combinators and branches', () => {
    expect(worded({ items: { type: 'string' } }, ['a', 1])).toBe('All array items must match schema');
    expect(worded({ prefixItems: [{ type: 'string' }] }, [1])).toBe('Array items must match corresponding schemas');
    expect(worded({ contains: { type: 'string' } }, [1])).toBe('At least one array item must match schema');
    expect(worded({ anyOf: [{ type: 'string' }, { type: 'boolean' }] }, 1)).toBe(
      'The data should match at least one schema',
    );
    expect(worded({ allOf: [{ type: 'integer' }, { minimum: 5 }] }, 1)).toBe('The data should match all schemas');
    expect(worded({ oneOf: [{ type: 'integer' }, { minimum: 0 }] }, 1)).toBe(
      'The data should match exactly one schema',
    );
    expect(worded({ not: { type: 'integer' } }, 1)).toBe('The data must not match schema');
    expect(worded({ if: { type: 'integer' }, then: { minimum: 5 } }, 1)).toBe("The data is not valid on 'then' branch");
    expect(worded({ additionalProperties: { type: 'string' }, properties: { a: {} } }, { a: 1, b: 1, c: 'x' })).toBe(
      'All additional object properties must match schema: b, c',
    );
    expect(worded({ patternProperties: { '^x': { type: 'string' } } }, { xa: 1 })).toBe(
      "Object properties that match pattern '^x' must also match pattern's schema",
    );
    expect(worded({ properties: { 'a/b': { type: 'string' }, '50%': false } }, { 'a/b': 1 })).toBe(
      'The properties must match schema: a/b',
    );
    expect(worded({ properties: { '50%': false } }, { '50%': 1 })).toBe("Property '50%' is not allowed");
    expect(worded({ properties: { a: { properties: { b: false } } } }, { a: { b: 1 } })).toBe(
      'The properties must match schema: a',
    );
    expect(worded({ propertyNames: { pattern: '^[a-z]+$' } }, { Foo: 1 })).toBe("Property 'Foo' must match schema");
    expect(worded({ if: { type: 'integer' }, then: false }, 1)).toBe("The data is never valid on 'then' branch");
    expect(worded({ contains: { type: 'integer' }, maxContains: 1 }, [1, 2])).toBe(
      'At most 1 array items must match schema',
    );
    expect(worded({ contains: { type: 'integer' }, minContains: 2 }, [1, 'a'])).toBe(
      'At least 2 array items must match schema',
    );
    expect(worded({ multipleOf: 0.00001 }, 0.000015)).toBe('Number must be a multiple of 1.0E-5');
    expect(worded({ maximum: 1.5e20 }, 2e20)).toBe('Number must be lower than or equal to 1.5E+20');
    // A $ref is compiled apart (refs are not inlined): its error reads as the referenced schema's own, where Opis says "The data must match $ref".
    expect(worded({ $defs: { s: { type: 'string' } }, $ref: '#/$defs/s' }, 1)).toBe(
      'The data (integer) must match the type: string',
    );
    // Below the root, the keyword that led to the $ref is found from the value's path.
    const refs = {
      $defs: { s: { type: 'string' } },
      properties: { a: { $ref: '#/$defs/s' } },
      items: { $ref: '#/$defs/s' },
    };
    expect(worded(refs, { a: 1 })).toBe('The properties must match schema: a');
    expect(worded(refs, ['x', 2])).toBe('All array items must match schema');
  });
});
