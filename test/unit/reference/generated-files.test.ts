import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from '../../../src/reference/generated-files.js';

const root = new URL('../../../', import.meta.url);

describe('the files generated from the code are up to date', () => {
  it.each(Object.entries(generatedFiles()))('%s', (path, content) => {
    let checkedIn = '';
    try {
      checkedIn = readFileSync(fileURLToPath(new URL(path, root)), 'utf8');
    } catch {
      // missing: reported below like a stale file
    }
    // One clear message (and the first line that differs) rather than a diff of 10 000 lines.
    expect(checkedIn === content, `${path} is stale (from line ${firstDifference(checkedIn, content)}): run \`npm run docs\` and commit the result`).toBe(true);
  });
});

function firstDifference(a: string, b: string): number {
  const left = a.split('\n');
  const right = b.split('\n');
  const index = left.findIndex((line, i) => line !== right[i]);
  return (index === -1 ? left.length : index) + 1;
}
