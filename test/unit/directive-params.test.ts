import { describe, expectTypeOf, it } from 'vitest';
import Concat from '../../src/directives/Concat.js';
import Http from '../../src/directives/Http.js';
import { defineDirective, type ParamsOf } from '../../src/engine/directive-types.js';

// Type checks (tsc -p tsconfig.json): a built-in directive's `run` gets the type of its schema.

type RunParams<D> = D extends { run(ctx: never, params: infer P): unknown } ? P : never;

describe('parameters typed by their schema', () => {
  it('keeps a parameter with a default optional: the engine does not fill defaults in', () => {
    expectTypeOf<RunParams<typeof Http>>().toEqualTypeOf<{ host: string; timeout?: number; connectTimeout?: number }>();
  });

  it('gives pattern properties an index signature beside the named ones', () => {
    expectTypeOf<RunParams<typeof Concat>>().toEqualTypeOf<{ [name: string]: unknown; target: string }>();
  });

  it('reads a union of types and an enum', () => {
    const _schema = {
      type: 'object',
      properties: { key: { type: ['string', 'null'] }, mode: { enum: ['a', 'b'] } },
      required: ['key'],
      additionalProperties: false,
    } as const;
    expectTypeOf<ParamsOf<typeof _schema>>().toEqualTypeOf<{ key: string | null; mode?: 'a' | 'b' }>();
  });

  it('refuses a piece of schema declared apart without `as const` (its `type` is only a string)', () => {
    const wide = { type: 'string' };
    defineDirective({
      name: 'Wide',
      summary: 'a schema whose literal types were lost',
      // @ts-expect-error: `type: string` is not a JSON Schema type
      params: { type: 'object', properties: { name: wide }, additionalProperties: false },
      run() {},
    });
  });
});
