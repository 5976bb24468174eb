import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleApis } from '../helpers/example-apis.js';
import { DEFAULT_SPARES, startInstance, type TestInstance } from '../helpers/instance.js';
import { waitFor } from '../helpers/wait-for.js';

// The whole real apis/ folder, as `npm start` serves it (every sub-folder deployed and published),
// proxy (deployed; its upstream is on the internet, not called here) and reports (its job run by the
// router). What the other examples answer runs in-process: test/directives/examples.test.ts.

const apis = exampleApis();
const folders = Object.keys(apis);

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis,
    // As `npm start` runs, with its spare threads (the other tests keep none): each API's first
    // request here takes a loaded spare, and the cell loads another.
    args: DEFAULT_SPARES,
  });
});
afterAll(async () => anvil?.dispose());

describe('the example APIs of apis/', () => {
  it('are all deployed, active and public at boot', async () => {
    expect(folders).toEqual(expect.arrayContaining(['dynamic', 'limited', 'proxy']));
    const listed = await anvil.admin('/anvil/api');
    expect(listed.status).toBe(200);
    expect([...listed.json()].sort()).toEqual([...folders].sort());
    for (const key of folders) {
      const record = await anvil.admin(`/anvil/api/${key}`);
      expect(record.status, key).toBe(200);
      expect(record.json(), key).toMatchObject({ key, active: true, public: true });
    }
  });

  it('proxy is deployed (its upstream comes from Maps/main.json)', async () => {
    const record = await anvil.admin('/anvil/api/proxy');
    expect(record.status).toBe(200);
    expect(record.json()).toMatchObject({ key: 'proxy', active: true, public: true });
    expect(record.json().release).toMatch(/^r-/);
  });
});

describe('the reports example (jobs)', () => {
  it('accepts work with 202 and exposes the result once the job ran', async () => {
    const accepted = await anvil.request('/reports/', {
      method: 'POST',
      body: JSON.stringify({ words: ['anvil', 'queues', 'work'] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(accepted.status).toBe(202);
    const { message, id } = accepted.json();
    expect(message).toBe('queued');
    const report = await waitFor(
      async () => {
        const now = (await anvil.request(`/reports/${id}`)).json();
        return now.state === 'pending' ? null : now;
      },
      { what: `report ${id} to leave the state pending`, timeoutMs: 5_000 },
    );
    expect(report).toMatchObject({ state: 'done', id, words: 3, longest: 'queues', letters: 15 });
    expect(
      (
        await anvil.request('/reports/', {
          method: 'POST',
          body: '{"words": 7}',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
  });
});
