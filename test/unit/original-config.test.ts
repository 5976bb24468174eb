import { describe, expect, it } from 'vitest';
import { validateApiYaml } from '../../src/deploy/api-yaml/load-api.js';
import type { ValidateContext } from '../../src/deploy/api-yaml/validate-context.js';
import { builtinDirectives } from '../../src/directives/catalogue.js';

// Issue 28: what the validator accepts of the original's API files (compat, bodyAsArray) and what
// it says of a leftover PHP directive.

const ctx: ValidateContext = {
  file: 'api.yaml',
  mapNames: new Set(),
  customDirectives: new Set(),
  directives: builtinDirectives,
};
const validate = (text: string, over: Partial<ValidateContext> = {}) => validateApiYaml(text, { ...ctx, ...over });

describe("validating the original's API files", () => {
  it('accepts compat: hefesto and records it; refuses any other value, naming the allowed ones', () => {
    const ok = validate('key: a\ncompat: hefesto\nendpoints:\n  get /p:\n    Ping: { directive: Ping }\n');
    expect(ok.errors).toEqual([]);
    expect(ok.definition?.compat).toBe('hefesto');
    expect(
      validate('key: a\nendpoints:\n  get /p:\n    Ping: { directive: Ping }\n').definition?.compat,
    ).toBeUndefined();

    const bad = validate('key: a\ncompat: php\nendpoints:\n  get /p:\n    Ping: { directive: Ping }\n');
    expect(bad.errors).toMatchObject([{ line: 2, message: '"compat" must be one of: hefesto (got "php")' }]);
  });

  it('accepts $.message.bodyAsArray, whole or drilled into', () => {
    const result = validate(
      'key: a\nendpoints:\n  post /p:\n    Reply: { directive: ModifyMessage, body: { all: $.message.bodyAsArray, name: $.message.bodyAsArray.user.name } }\n',
    );
    expect(result.errors).toEqual([]);
  });

  it('names the PHP file and docs/migrating.md for an entry whose directive is only Directives/<Name>.php', () => {
    const result = validate('key: a\nendpoints:\n  get /p:\n    Stamp: { directive: Stamp }\n', {
      phpDirectives: new Set(['Stamp']),
    });
    expect(result.errors).toMatchObject([
      {
        line: 4,
        label: 'get /p › Stamp',
        message:
          'unknown directive "Stamp": Directives/Stamp.php is PHP, which Anvil does not run: translate it to Directives/Stamp.js or .ts (docs/migrating.md)',
      },
    ]);
  });
});
