import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findTcmalloc } from '../../src/cell/process/cell-allocator.js';
import { anvilCli } from '../helpers/cli.js';
import { cellPids } from '../helpers/cells.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

// Cells preload tcmalloc where it is installed (cell/process/cell-allocator.ts); the router keeps the
// system allocator. Debian's libtcmalloc-minimal4 is what these machines have (.ci/run installs it);
// without it cells run on the system allocator and say so.
const TCMALLOC = findTcmalloc();

const api = {
  'api.yaml': 'key: alloc\nendpoints:\n  get /hello:\n    Hello: { directive: Hello }\n',
  'Directives/Hello.js':
    "export default function Hello(state) {\n  state.message.body = { hello: 'x'.repeat(3) };\n}\n",
};

let anvil: TestInstance | undefined;

afterEach(async () => {
  await anvil?.dispose();
  anvil = undefined;
});

const mapped = (pid: number) => readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libtcmalloc_minimal');
const allocatorLog = (instance: TestInstance) =>
  instance.logLines().find((line) => line.msg === 'cells: memory allocator')?.allocator as string | undefined;

describe("the cells' memory allocator", () => {
  // One machine has tcmalloc, another not: each checks what Anvil does there (npm test passes on both).
  it(
    TCMALLOC === undefined
      ? 'is the system allocator where tcmalloc is not installed, and the start log says what to install'
      : 'is tcmalloc where it is installed, in every cell and not in the router, and custom directives run on it',
    async () => {
      anvil = await startInstance({ apis: { alloc: api }, args: ['--cells', '2'] });
      const reply = await anvil.request('/alloc/hello');
      expect(reply.status).toBe(200);
      expect(reply.json()).toEqual({ hello: 'xxx' });
      const cells = cellPids(anvil.pid);
      expect(cells.length).toBeGreaterThanOrEqual(2);
      expect(mapped(anvil.pid)).toBe(false);
      if (TCMALLOC === undefined) {
        expect(cells.map(mapped)).toEqual(cells.map(() => false));
        expect(allocatorLog(anvil)).toMatch(
          /^the system allocator \(no libtcmalloc_minimal\.so\.4 found: installing libtcmalloc-minimal4/,
        );
      } else {
        expect(cells.map(mapped)).toEqual(cells.map(() => true));
        expect(allocatorLog(anvil)).toBe(`tcmalloc (${TCMALLOC})`);
      }
    },
  );

  it("is the system's with ANVIL_CELL_MALLOC=system", async () => {
    anvil = await startInstance({ apis: { alloc: api }, args: ['--cells', '1'], env: { ANVIL_CELL_MALLOC: 'system' } });
    expect((await anvil.request('/alloc/hello')).status).toBe(200);
    const cells = cellPids(anvil.pid);
    expect(cells.length).toBeGreaterThanOrEqual(1);
    expect(cells.map(mapped)).toEqual(cells.map(() => false));
    expect(allocatorLog(anvil)).toBe('the system allocator (ANVIL_CELL_MALLOC=system)');
  });

  it('refuses to start with a library that is not there, saying which', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'anvil-data-'));
    try {
      const result = anvilCli(['start', '--port', '0', '--data', dataDir], {
        env: { ANVIL_CELL_MALLOC: '/nowhere/libmalloc.so' },
      });
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain('ANVIL_CELL_MALLOC: /nowhere/libmalloc.so does not exist');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
