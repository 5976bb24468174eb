import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';

// Issue 28 item 6: ForTheWorker's 200 under `compat: hefesto`, its job run by the router (the
// original's other habits run in-process: test/directives/original-compat.test.ts).

const queueing = (key: string, compat: string) => ({
  'api.yaml': `key: ${key}\n${compat}endpoints:\n  post /queue:\n    Queue: { directive: ForTheWorker, identifier: true }\n    Work: { directive: SetMemory, target: done, value: true }\n`,
});

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({ apis: { legacy: queueing('legacy', ''), ported: queueing('ported', 'compat: hefesto\n') } });
});
afterAll(async () => anvil?.dispose());

describe('ForTheWorker with identifier (issue 28 item 6)', () => {
  it("answers 202 in Anvil, and the original's 200 with compat: hefesto, with the same body", async () => {
    const anvilReply = await anvil.request('/legacy/queue', { method: 'POST' });
    expect(anvilReply.status).toBe(202);
    expect(anvilReply.json()).toEqual({ message: 'queued', id: expect.any(String) });

    const ported = await anvil.request('/ported/queue', { method: 'POST' });
    expect(ported.status).toBe(200);
    expect(ported.headers['content-type']).toContain('application/json');
    const { id } = ported.json();
    expect(ported.json()).toEqual({ message: 'queued', id });
    // The job was queued all the same, and runs.
    await eventually(() => JSON.parse(anvilCli(['jobs', 'get', id, '--data', anvil.dataDir, '--json']).stdout).state === 'completed');
  });
});
