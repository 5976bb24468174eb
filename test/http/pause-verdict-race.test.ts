import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { killerApi } from '../helpers/killer-api.js';

// The client gets its 502 when the dying cell's sockets close; the router learns of the cell's death
// (and gives its verdict: quarantine, or pause) from the process's exit a moment later. A request
// sent at once after the 502 used to land in that moment: queued for the dead cell, then refused
// with a plain 503 "Service Unavailable" instead of the pause (2 rounds of 3 here, before the fix);
// with a second thread of the API in the cell, sent to it and failed with a second 502. The
// scenario runs several times, each with an API of its own, since the order of those two events
// varies.
const ROUNDS = 3;
const keys = Array.from({ length: ROUNDS }, (_, i) => `killer-${i}`);

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis: Object.fromEntries(keys.map((key) => [key, killerApi(key, ['ArrayFill', 'PropertyGrowth'])])),
    // As in sandbox-fatal.test.ts: room for the allocations to abort their process on a loaded machine.
    args: ['--cells', '2', '--request-timeout', '6s', '--max-directive-cpu', '10s'],
  });
});

afterAll(async () => {
  await anvil?.dispose();
});

const logged = (msg: string, api: string) => anvil.logLines().filter((l) => l.msg === msg && l.api === api);

describe('the pause after an API kills its quarantine cell', () => {
  it('refuses the request sent right after the 502, every time', async () => {
    for (const key of keys) {
      expect((await anvil.request(`/${key}/ping`)).status).toBe(200);
      expect((await anvil.request(`/${key}/ArrayFill`)).status).toBe(502);
      await eventually(() => logged('API quarantined in a cell of its own', key)[0]);
      await eventually(async () => (await anvil.request(`/${key}/ping`)).status === 200);

      expect((await anvil.request(`/${key}/PropertyGrowth`)).status).toBe(502);
      // At once, as a client retrying would: no waiting for the log line.
      const next = await anvil.request(`/${key}/ping`);
      expect({ key, status: next.status, body: next.json() }).toMatchObject({
        key,
        status: 503,
        body: { error: expect.stringMatching(/paused/) },
      });
      expect(Number(next.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      await eventually(() => logged('API killed its quarantine cell again; paused', key)[0]);
    }
  }, 120_000);
});
