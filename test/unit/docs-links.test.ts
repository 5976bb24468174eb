import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every relative link of README.md and docs/*.md reaches a file that exists and, with a #fragment
// into a markdown file, a heading of it (GitHub's anchors: lower case, punctuation dropped, spaces
// to hyphens, -1, -2… for repeats). Links inside code are not links.

const root = join(import.meta.dirname, '../..');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The lines outside fenced code blocks, with inline code spans blanked. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return fenced || line.startsWith('```') ? '' : line.replace(/`[^`]*`/g, '``');
  });
}

function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}_\s-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    out.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return out;
}

function brokenLinks(page: string): string[] {
  const text = readFileSync(join(root, page), 'utf8');
  const broken: string[] = [];
  for (const [index, line] of prose(text).entries()) {
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [path, fragment] = target.split('#') as [string, string | undefined];
      const file = path === '' ? join(root, page) : join(root, dirname(page), decodeURIComponent(path));
      const where = `${page}:${index + 1} ${target}`;
      if (!existsSync(file)) broken.push(`${where}: no file ${relative(root, file)}`);
      else if (
        fragment !== undefined &&
        file.endsWith('.md') &&
        statSync(file).isFile() &&
        !anchors(readFileSync(file, 'utf8')).has(fragment)
      )
        broken.push(`${where}: no heading #${fragment}`);
    }
  }
  return broken;
}

describe('links between README.md and docs/', () => {
  it('makes anchors as GitHub does', () => {
    expect([...anchors("## Metrics, logs and `anvil bench`\n## The API's files\n## Jobs\n## Jobs\n")]).toEqual([
      'metrics-logs-and-anvil-bench',
      'the-apis-files',
      'jobs',
      'jobs-1',
    ]);
  });

  it.each(pages)('%s has no broken relative link', (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });
});
