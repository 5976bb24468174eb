import { describe, expect, it } from 'vitest';
import { describeInvalid, ModelSchemas } from '../../src/directives/models/model-schemas.js';

describe('ModelSchemas', () => {
  const maps = {
    item: { type: 'object', required: ['id'] },
    broken: { type: 'strin' },
    list: [1],
    a: { $id: 'same' },
    b: { $id: 'same' },
  };

  it('compiles each map once and keeps the result, failures included', () => {
    const schemas = new ModelSchemas(maps);
    const first = schemas.get('item');
    expect(first.ok).toBe(true);
    expect(schemas.get('item')).toBe(first);
    const broken = schemas.get('broken');
    expect(broken).toMatchObject({ ok: false, reason: 'invalid' });
    expect(schemas.get('broken')).toBe(broken);
  });

  it('tells a missing map from one that is not a schema', () => {
    const schemas = new ModelSchemas(maps);
    expect(schemas.get('nope')).toEqual({
      ok: false,
      reason: 'missing',
      message: 'there is no map "nope" (Maps/nope.json) to validate against',
    });
    expect(schemas.get('list')).toEqual({
      ok: false,
      reason: 'invalid',
      message: 'map "list" is not a JSON Schema: a schema is an object or a boolean',
    });
    expect(schemas.get('toString')).toMatchObject({ reason: 'missing' });
    // Two maps that claim the same $id: the second one is refused, not mixed up with the first.
    expect(schemas.get('a').ok).toBe(true);
    expect(schemas.get('b')).toMatchObject({ ok: false, message: expect.stringContaining('"same" already exists') });
  });

  it('ignores unknown keywords and formats, as JSON Schema says', () => {
    const model = new ModelSchemas({ m: { type: 'string', format: 'made-up', example: 'x', 'x-vendor': true } }).get(
      'm',
    );
    if (!model.ok) throw new Error(model.message);
    expect(model.validate('anything')).toBe(true);
    expect(model.validate(1)).toBe(false);
  });

  it('describes the first error on one line, escaping control characters', () => {
    const schemas = new ModelSchemas({ m: { type: 'object', additionalProperties: false } });
    const model = schemas.get('m');
    if (!model.ok) throw new Error(model.message);
    expect(model.validate({ 'bad\nname': 1 })).toBe(false);
    expect(describeInvalid('m', model.validate.errors)).toBe('m must NOT have additional properties: "bad\\nname"');
    expect(
      describeInvalid('m', [
        { instancePath: '/a\nb', keyword: 'type', message: 'must be string', params: {}, schemaPath: '' },
      ]),
    ).toBe('m/a\\u000ab must be string');
  });
});
