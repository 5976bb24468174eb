import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { StartOption } from '../../../src/cli/start-option.js';
import { START_FLAGS } from '../../../src/cli/start-table.js';

const operate = readFileSync(fileURLToPath(new URL('../../../docs/operate.md', import.meta.url)), 'utf8');
const byFlag = new Map(
  Object.values(START_FLAGS).map((option: StartOption<unknown>) => [option.flag!.split(' ')[0]!, option]),
);

/**
 * The rows of docs/operate.md's tables of limits (`| limit | default | set with… |`) set by one
 * flag (its cell starts with it, and names no other): that row's default as written, and the flag.
 */
function limitRows(): { line: string; shown: string; option: StartOption<unknown> }[] {
  const rows = [];
  let inLimits = false;
  for (const line of operate.split('\n')) {
    if (line.startsWith('| limit | default |')) inLimits = true;
    else if (!line.startsWith('|')) inLimits = false;
    const cells = line.split(' | ');
    const flags = [...(cells[2] ?? '').matchAll(/`(--[a-z-]+)`/g)].map((match) => match[1]!);
    const option = byFlag.get(flags[0] ?? '');
    if (inLimits && option !== undefined && flags.length === 1 && cells[2]!.startsWith(`\`${flags[0]}\``))
      rows.push({ line, shown: cells[1]!, option });
  }
  return rows;
}

describe('the tables of limits in docs/operate.md', () => {
  it("give each flag's default as the options table has it", () => {
    const rows = limitRows();
    expect(rows.length).toBeGreaterThan(25);
    for (const { line, shown, option } of rows) {
      // "1 MiB", "10 s", "64 levels", "1 000": the number and its unit, as the flag would take them.
      const written = /^(\d[\d ]*\d|\d)\s?(KiB|MiB|GiB|ms|s|m)?\b/.exec(shown);
      // A default worked out at start ("the number of CPUs"): its first clause.
      if (option.defaultDoc !== null) expect(shown.startsWith(option.defaultDoc.split(',')[0]!), line).toBe(true);
      else
        expect(
          written && option.parse.read(`${written[1]!.replace(/ /g, '')}${written[2] ?? ''}`, 'the docs'),
          line,
        ).toBe(option.default);
    }
  });
});
