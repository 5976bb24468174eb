import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { docsFiles } from '../../../src/cli/docs-files.js';
import { START_OPTIONS_END, START_OPTIONS_START, startOptionsDoc } from '../../../src/cli/start-doc.js';
import { ENDPOINTS_TABLE_END, ENDPOINTS_TABLE_START, endpointsTable } from '../../../src/front/admin/endpoints-doc.js';
import { LIMITS_TABLE_END, LIMITS_TABLE_START, limitsTable } from '../../../src/deploy/reference/limits-table.js';

const root = new URL('../../../', import.meta.url);

/** A checked-in file's text; '' when it is missing (reported like a stale file). */
function read(path: string): string {
  try {
    return readFileSync(fileURLToPath(new URL(path, root)), 'utf8');
  } catch {
    return '';
  }
}

describe('the files generated from the code are up to date', () => {
  it.each(Object.entries(docsFiles(read)))('%s', (path, content) => {
    const checkedIn = read(path);
    // One clear message (and the first line that differs) rather than a diff of 10 000 lines.
    expect(
      checkedIn === content,
      `${path} is stale (from line ${firstDifference(checkedIn, content)}): run \`npm run docs\` and commit the result`,
    ).toBe(true);
  });

  it('docs/api-yaml.md keeps the markers of its generated limits table', () => {
    expect(read('docs/api-yaml.md')).toContain(`${LIMITS_TABLE_START}\n${limitsTable()}\n${LIMITS_TABLE_END}`);
  });

  it('docs/operate.md keeps the markers of its generated endpoint table, one row per admin endpoint', () => {
    const table = endpointsTable();
    expect(read('docs/operate.md')).toContain(`${ENDPOINTS_TABLE_START}\n${table}\n${ENDPOINTS_TABLE_END}`);
    expect(table).toContain("| `PUT /anvil/api/<key>` | the host's key |");
    expect(table).toContain('| `GET /anvil/health` | none |');
  });

  it("docs/operate.md keeps the markers of its generated table of anvil start's options", () => {
    expect(read('docs/operate.md')).toContain(`${START_OPTIONS_START}\n${startOptionsDoc()}\n${START_OPTIONS_END}`);
  });
});

function firstDifference(a: string, b: string): number {
  const left = a.split('\n');
  const right = b.split('\n');
  const index = left.findIndex((line, i) => line !== right[i]);
  return (index === -1 ? left.length : index) + 1;
}
