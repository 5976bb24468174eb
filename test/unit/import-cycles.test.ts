import { fileURLToPath } from 'node:url';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The folders under src/, lowest first: each one is a layer and imports only from the layers before
 * it (README, "Layout"). shared: what every process speaks (protocol, errors, metrics, tracing,
 * logs); engine: running an endpoint's entries, knowing no directive by name; directives: the
 * built-ins and their support code; cell: the cell process, its actor threads and sandboxes;
 * deploy: api.yaml, releases, the registry and the control plane; testing: an API run in-process;
 * front: the router process; cli: the commands.
 */
const LAYERS = ['shared', 'engine', 'directives', 'cell', 'deploy', 'testing', 'front', 'cli'];

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

const graph = sourceGraph();

/** `front/edge/front-door.ts` → `front/edge`; a file directly in a layer folder is its own unit. */
function folderOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** One cycle of the folder graph, or null: depth-first, a back edge closes a cycle. */
function folderCycle(edges: Map<string, Set<string>>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (folder: string): string[] | null => {
    state.set(folder, 'open');
    path.push(folder);
    for (const next of edges.get(folder) ?? []) {
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    path.pop();
    state.set(folder, 'done');
    return null;
  };
  for (const folder of edges.keys()) {
    if (state.has(folder)) continue;
    const found = visit(folder);
    if (found) return found;
  }
  return null;
}

describe('src/ imports', () => {
  it('have no cycles (type-only imports included)', async () => {
    const files = await graph;
    // An import madge could not resolve would hide its edge, and any cycle through it.
    expect(files.warnings().skipped).toEqual([]);
    expect(Object.keys(files.obj()).length).toBeGreaterThan(100);
    expect(files.obj()['front/scheduling/thread-link.ts']).toContain('shared/protocol/frames.ts');
    const cycles = files.circular().map((cycle) => cycle.join(' > '));
    expect(cycles, `import cycles in src/:\n${cycles.map((c, i) => `${i + 1}) ${c}`).join('\n')}\n`).toEqual([]);
  });

  it('go from a layer to the same or a lower one only', async () => {
    const upward: string[] = [];
    const outside: string[] = [];
    for (const [file, imports] of Object.entries((await graph).obj())) {
      const from = LAYERS.indexOf(file.split('/')[0]!);
      if (from < 0) outside.push(file);
      for (const target of imports) {
        const to = LAYERS.indexOf(target.split('/')[0]!);
        if (to > from) upward.push(`${file} imports ${target} (${LAYERS[from]} is below ${LAYERS[to]})`);
      }
    }
    expect(outside, 'every file under src/ is in a layer folder').toEqual([]);
    expect(upward, `imports from a lower layer to a higher one:\n${upward.join('\n')}\n`).toEqual([]);
  });

  it('have no cycle between the folders inside the layers', async () => {
    const edges = new Map<string, Set<string>>();
    for (const [file, imports] of Object.entries((await graph).obj())) {
      const from = folderOf(file);
      for (const target of imports) {
        const to = folderOf(target);
        if (to === from) continue;
        if (!edges.has(from)) edges.set(from, new Set());
        edges.get(from)!.add(to);
      }
    }
    expect(edges.size).toBeGreaterThan(20);
    expect(folderCycle(edges), 'a cycle of folders').toBeNull();
  });
});
