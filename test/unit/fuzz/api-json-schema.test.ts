import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { YAML_LIMITS } from '../../../src/shared/api-model/input-limits.js';
import { validateApiYaml } from '../../../src/deploy/api-yaml/load-api.js';
import { readYaml } from '../../../src/deploy/api-yaml/read-yaml.js';
import { builtinDirectives } from '../../../src/directives/catalogue.js';
import { apiJsonSchema } from '../../../src/deploy/reference/api-json-schema.js';
import { yamlFlow } from '../../../src/deploy/reference/yaml-flow.js';
import { FUZZ_TEST_TIMEOUT_MS, fuzzParameters } from '../../helpers/fuzz-budget.js';
import { exampleApis } from './api-yaml-examples.js';
import { mutatedYaml } from './yaml-mutations.js';

// schema/api.schema.json never refuses a file `anvil validate` accepts, and on entries made of
// well-formed aliases and plain values the two give the same verdict.

const checkSchema = new Ajv2020({ allErrors: false, strict: false, allowUnionTypes: true }).compile(
  apiJsonSchema(builtinDirectives),
);
const examples = exampleApis();

function schemaAccepts(text: string): boolean | null {
  const reading = readYaml(text, YAML_LIMITS);
  return reading.ok ? checkSchema(reading.data) : null;
}

describe('schema/api.schema.json against the validator, on random input', () => {
  it(
    'mutations of the example api.yaml files: what the validator accepts, the schema accepts',
    () => {
      const input = fc
        .integer({ min: 0, max: examples.length - 1 })
        .chain((i) => fc.tuple(fc.constant(examples[i]!), mutatedYaml(examples[i]!.text)));
      fc.assert(
        fc.property(input, ([example, text]) => {
          if (validateApiYaml(text, example.ctx).errors.length > 0) return;
          expect(schemaAccepts(text), text).toBe(true);
        }),
        fuzzParameters(1500),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );

  it(
    'generated entries of built-in directives: the same verdict',
    () => {
      // Directives that run another (ExecuteIf) are left out: the schema does not follow them twice deep.
      const names = [...builtinDirectives.values()].filter((d) => d.runs === undefined).map((d) => d.name);
      const scalar = fc.oneof(
        fc.constantFrom(
          'text',
          '',
          '/path',
          'a b',
          'GET',
          'json',
          'basic',
          'run',
          'css',
          '$.memory.x',
          '$.message.query.q',
          '$.map.main.k',
        ),
        fc.integer({ min: -5, max: 700 }),
        fc.double({ min: -1, max: 100, noNaN: true }),
        fc.boolean(),
        fc.constant(null),
      );
      const value = fc.oneof(
        scalar,
        fc.array(scalar, { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'content-type', 'x'), scalar, { maxKeys: 2 }),
      );
      const entry = fc.constantFrom(...names).chain((name) => {
        const own = Object.keys(builtinDirectives.get(name)!.params.properties);
        const key = fc.constantFrom(...own, 'element1', 'other');
        return fc.tuple(fc.constant(name), fc.dictionary(key, value, { maxKeys: 4 }));
      });
      const ctx = {
        file: 'api.yaml',
        mapNames: new Set(['main']),
        customDirectives: new Set<string>(),
        directives: builtinDirectives,
      };
      fc.assert(
        fc.property(entry, ([name, params]) => {
          const text = `key: fuzz\nendpoints:\n  get /x:\n    E: ${yamlFlow({ directive: name, ...params })}\n`;
          const validatorAccepts = validateApiYaml(text, ctx).errors.length === 0;
          expect(schemaAccepts(text), text).toBe(validatorAccepts);
        }),
        fuzzParameters(3000),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
