import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cellPid } from '../helpers/cells.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis: { flags: { 'api.yaml': 'key: flags\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' } },
    env: { ANVIL_CELL_NODE_FLAGS: '--max-semi-space-size=8  --stack-trace-limit=20' },
  });
});
afterAll(async () => anvil?.dispose());

it('starts every cell with the Node flags of ANVIL_CELL_NODE_FLAGS, and the cells serve', async () => {
  for (const cell of [0, 1]) {
    const args = readFileSync(`/proc/${cellPid(anvil.pid, cell)}/cmdline`, 'utf8')
      .split('\0')
      .slice(0, -1);
    expect(args).toContain('--max-semi-space-size=8');
    expect(args).toContain('--stack-trace-limit=20');
    expect(args).not.toContain('');
  }
  expect((await anvil.request('/flags/ping')).status).toBe(200);
});
