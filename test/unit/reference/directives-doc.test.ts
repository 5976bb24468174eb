import { describe, expect, it } from 'vitest';
import { validateApiYaml } from '../../../src/deploy/api-yaml/load-api.js';
import { builtinDirectives } from '../../../src/directives/catalogue.js';
import { directivesDoc, exampleParams } from '../../../src/deploy/reference/directives-doc.js';
import { yamlFlow } from '../../../src/deploy/reference/yaml-flow.js';

const doc = directivesDoc(builtinDirectives.values());

describe('docs/directives.md', () => {
  // The route has the path parameters the examples read; maps are not loaded, so checks that read them are skipped.
  it.each([...builtinDirectives.keys()])('%s: a section whose example is an entry the validator accepts', (name) => {
    const directive = builtinDirectives.get(name)!;
    const entry = `${name}: ${yamlFlow({ directive: name, ...exampleParams(directive) })}`;
    expect(doc).toContain(`\n## ${name}\n\n${directive.summary}\n`);
    expect(doc).toContain(`\`\`\`yaml\n${entry}\n\`\`\``);
    const text = `key: examples\nendpoints:\n  get /x/{id}/{name}:\n    ${entry}\n`;
    const result = validateApiYaml(text, {
      file: 'api.yaml',
      mapNames: new Set(['main']),
      customDirectives: new Set(),
      directives: builtinDirectives,
    });
    expect(result.errors).toEqual([]);
  });

  it('shows what a directive declares: defaults, required parameters, memory effects and failures with their codes', () => {
    const pull = doc.slice(doc.indexOf('\n## Pull\n'), doc.indexOf('\n## Push\n'));
    expect(pull).toMatch(/\| `host` \| string \(non-empty\) \| yes \| {2}\|/);
    expect(pull).toContain('| `timeout` | number (more than 0, at most 300) |  | `10` |');
    expect(pull).toContain('- writes `<target>`, `pullStatus`');
    expect(pull).toContain('- `502` (`ANVIL_ERR_UPSTREAM_STATUS`) when the answer has a status of 400 or more');
    const throwError = doc.slice(doc.indexOf('\n## ThrowError\n'), doc.indexOf('\n## ValidateModel\n'));
    expect(throwError).toContain('- the status it is given (`ANVIL_ERR_THROWN`)');
  });
});
