import { describe, expect, it } from 'vitest';
import { validateApiYaml } from '../../src/deploy/api-yaml/load-api.js';
import type { ValidateContext } from '../../src/deploy/api-yaml/validate-context.js';
import { builtinDirectives } from '../../src/directives/catalogue.js';

// api.yaml `database:` (sqlite, the default, or postgres), and what an instance without the
// cluster's Postgres says of `database: postgres`.

const ctx: ValidateContext = {
  file: 'api.yaml',
  mapNames: new Set(),
  customDirectives: new Set(),
  directives: builtinDirectives,
};
const text = (database: string) => `key: notes\n${database}endpoints:\n  get /ping:\n    Pong: { directive: Ping }\n`;

describe('api.yaml database:', () => {
  it('defaults to sqlite and keeps the definition as before', () => {
    for (const line of ['', 'database: sqlite\n']) {
      const result = validateApiYaml(text(line), { ...ctx, postgres: false });
      expect(result.errors).toEqual([]);
      expect(result.definition).not.toHaveProperty('database');
    }
  });

  it("takes postgres on an instance with the cluster's Postgres", () => {
    const result = validateApiYaml(text('database: postgres\n'), { ...ctx, postgres: true });
    expect(result.errors).toEqual([]);
    expect(result.definition?.database).toBe('postgres');
  });

  it('refuses another value at its line and column', () => {
    const result = validateApiYaml(text('database: mysql\n'), ctx);
    expect(result.errors).toEqual([
      {
        file: 'api.yaml',
        line: 2,
        column: 11,
        label: null,
        message: '"database" must be one of: sqlite, postgres (got "mysql")',
      },
    ]);
  });

  it('refuses postgres at its line on an instance without DATABASE_URL, and leaves it to the instance when not asked', () => {
    const refused = validateApiYaml(text('database: postgres\n'), { ...ctx, postgres: false });
    expect(refused.errors).toHaveLength(1);
    expect(refused.errors[0]).toMatchObject({ line: 2, column: 11 });
    expect(refused.errors[0]!.message).toMatch(/needs the cluster's Postgres: start the instance with DATABASE_URL/);
    expect(validateApiYaml(text('database: postgres\n'), ctx).errors).toEqual([]);
  });
});
