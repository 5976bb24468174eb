import { fileURLToPath } from 'node:url';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The import graph of src/ as madge sees it, with the repo's tsconfig (`./x.js` is `./x.ts`). */
async function sourceGraph(): Promise<Awaited<ReturnType<typeof madge>>> {
  // madge's TypeScript parser warns (DeprecationWarning, once per `import('…')` type) as it walks the syntax tree.
  const quiet = process.noDeprecation;
  process.noDeprecation = true;
  try {
    return await madge(`${root}src`, { fileExtensions: ['ts'], tsConfig: `${root}tsconfig.json` });
  } finally {
    process.noDeprecation = quiet;
  }
}

describe('src/ imports', () => {
  it('have no cycles (type-only imports included)', async () => {
    const graph = await sourceGraph();
    // An import madge could not resolve would hide its edge, and any cycle through it.
    expect(graph.warnings().skipped).toEqual([]);
    const files = graph.obj();
    expect(Object.keys(files).length).toBeGreaterThan(100);
    expect(files['router/thread-link.ts']).toContain('protocol/frames.ts');
    const cycles = graph.circular().map((cycle) => cycle.join(' > '));
    expect(cycles, `import cycles in src/:\n${cycles.map((c, i) => `${i + 1}) ${c}`).join('\n')}\n`).toEqual([]);
  });
});
