import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateApiYaml, type ValidateResult } from '../../../src/deploy/api-yaml/load-api.js';
import type { ValidateContext } from '../../../src/deploy/api-yaml/validate-context.js';
import { builtinDirectives } from '../../../src/directives/catalogue.js';
import { FUZZ_TEST_TIMEOUT_MS, fuzzParameters } from '../../helpers/fuzz-budget.js';
import { exampleApis } from './api-yaml-examples.js';
import { mutatedYaml, yamlSoup } from './yaml-mutations.js';

// The api.yaml loader on hostile text: it never throws, always answers with positioned errors
// (file, line ≥ 1, column ≥ 1) or a definition, and never hangs.

/** Far above what any input here takes (a few ms); only a hang or a blow-up reaches it. */
const PER_INPUT_CAP_MS = 3_000;

const plainCtx: ValidateContext = {
  file: 'api.yaml',
  mapNames: new Set(['main']),
  customDirectives: new Set(),
  directives: builtinDirectives,
};

function lineCount(text: string): number {
  return (text.match(/\r\n|\r|\n/g)?.length ?? 0) + 1;
}

/** Validates, and checks what any answer must be; returns it. */
function validateChecked(text: string, ctx: ValidateContext): ValidateResult {
  const started = performance.now();
  const result = validateApiYaml(text, ctx);
  const took = performance.now() - started;
  expect(took, `validating ${text.length} characters took ${took.toFixed(0)} ms`).toBeLessThan(PER_INPUT_CAP_MS);
  expect(Array.isArray(result.errors)).toBe(true);
  expect(result.definition === null).toBe(result.errors.length > 0);
  const lines = lineCount(text);
  for (const error of result.errors) {
    const shown = JSON.stringify(error);
    expect(error.file, shown).toBe(ctx.file);
    expect(Number.isInteger(error.line) && error.line >= 1 && error.line <= lines, shown).toBe(true);
    expect(Number.isInteger(error.column) && error.column >= 1, shown).toBe(true);
    expect(error.label === null || typeof error.label === 'string', shown).toBe(true);
    expect(typeof error.message === 'string' && error.message.length > 0, shown).toBe(true);
  }
  return result;
}

const examples = exampleApis();

describe('the api.yaml loader on random input', () => {
  it('the example api.yaml files it mutates are valid to start with', () => {
    expect(examples.length).toBeGreaterThan(20);
    for (const example of examples) expect(validateApiYaml(example.text, example.ctx).errors, example.name).toEqual([]);
  });

  it(
    'arbitrary text: positioned errors, never a throw',
    () => {
      const text = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 400 }),
        fc.string({ unit: 'grapheme-ascii', maxLength: 400 }),
        yamlSoup,
      );
      fc.assert(
        fc.property(text, (t) => void validateChecked(t, plainCtx)),
        fuzzParameters(3000),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );

  it(
    'mutations of the example api.yaml files: positioned errors, never a throw',
    () => {
      const input = fc
        .integer({ min: 0, max: examples.length - 1 })
        .chain((i) => fc.tuple(fc.constant(examples[i]!), mutatedYaml(examples[i]!.text)));
      fc.assert(
        fc.property(input, ([example, text]) => void validateChecked(text, example.ctx)),
        fuzzParameters(2000),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});

// Each family grows an input by repeating a part of it. Timed at n and 4n (the best of three, so a
// moment without the CPU does not count): linear work takes about 4 times as long, quadratic 16.
const head = 'key: k\nendpoints:\n';
const listHead = `${head}  get /x:\n    R:\n      directive: ModifyMessage\n      body:\n`;
const repeat = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join('');
const families: Array<[name: string, make: (n: number) => string]> = [
  ['routes', (n) => head + repeat(n, (i) => `  get /r${i}/{id}: { P: { directive: Ping } }\n`)],
  ['duplicate route shapes', (n) => head + repeat(n, (i) => `  get /r/{id${i}}: { P: { directive: Ping } }\n`)],
  [
    'misspelt directives (suggestions)',
    (n) => `${head}  get /x:\n${repeat(n, (i) => `    L${i}: { directive: Pnig${i} }\n`)}`,
  ],
  ['duplicate labels', (n) => `${head}  get /x:\n${repeat(n, () => '    L: { directive: Ping }\n')}`],
  ['anchors', (n) => listHead + repeat(n, (i) => `        - &a${i} v\n`)],
  ['aliases of unknown forms', (n) => listHead + repeat(n, (i) => `        - $.nothing${i}\n`)],
  [
    'keys of a flow map',
    (n) => `${head}  get /x: { R: { directive: ModifyMessage, body: {${repeat(n, (i) => `k${i}: ${i}, `)}} } }\n`,
  ],
  ['syntax errors', (n) => repeat(n, (i) => `: - [ { ? ${i} & * ! | >\n`)],
  ['tab indentation', (n) => head + repeat(n, () => '\t- x\n')],
  ['documents', (n) => repeat(n, () => '---\nkey: k\n')],
  ['a block scalar', (n) => `key: |\n${repeat(n, () => '  some text\n')}`],
  ['an unclosed quote', (n) => `key: "${'x'.repeat(n * 10)}`],
  ['anchors on one node', (n) => repeat(n, () => '&a &b ')],
  ['aliases at node ends', (n) => repeat(n, () => '*a *b ')],
];

function bestOfThree(text: string): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    validateApiYaml(text, plainCtx);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

describe('the api.yaml loader takes time linear in its input', () => {
  it.each(families)('%s', (_name, make) => {
    const n = 800;
    const small = bestOfThree(make(n));
    const large = bestOfThree(make(4 * n));
    expect(large, `${small.toFixed(1)} ms at n, ${large.toFixed(1)} ms at 4n`).toBeLessThan(10 * small + 20);
  });
});
