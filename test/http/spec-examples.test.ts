import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { waitFor } from '../helpers/wait-for.js';

// The examples of SPEC §6 (publishing, through the admin host) and §8 (jobs, queued and run by the
// router) of test/fixtures/spec-examples/, over HTTP against a real instance; the other sections'
// run in-process: test/directives/spec-examples.test.ts.

const EXAMPLES = join(import.meta.dirname, '../fixtures/spec-examples');

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({ apis: { notes: join(EXAMPLES, 'notes'), jobs: join(EXAMPLES, 'jobs') } });
});
afterAll(async () => anvil?.dispose());

describe('SPEC §6 publishing and disabling', () => {
  it('GET the record, PUT it public; PUT it inactive and private: 404 on every host', async () => {
    const record = await anvil.admin('/anvil/api/notes');
    expect(record.status).toBe(200);
    const { release } = record.json();
    const put = (body: object) =>
      anvil.admin('/anvil/api/notes', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await put({ active: false, release, public: false })).status).toBe(204);
    expect((await anvil.request('/notes/notes')).status).toBe(404);
    expect((await anvil.admin('/notes/notes')).status).toBe(404);
    expect((await put({ active: true, release, public: true })).status).toBe(204);
    expect((await anvil.request('/notes/notes')).status).toBe(200);
  });
});

describe('SPEC §8 jobs', () => {
  it("answers 202 with the job id, then runs the rest as a job with $.id the job id and the request's memory and message", async () => {
    const reply = await anvil.request('/jobs/work', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"item":"report"}',
    });
    expect(reply.status, reply.text).toBe(202);
    const { message, id } = reply.json();
    expect(message).toBe('queued');
    const done = await waitFor(
      async () => {
        const row = (await anvil.request(`/jobs/work/${id}`)).json().row;
        return row ?? null;
      },
      { what: `job ${id} to store its row` },
    );
    expect(done).toEqual({ id, item: 'report', note: 'set before queueing' });
  });
});
