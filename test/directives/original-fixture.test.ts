import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

// Issue 28: an API written in the original's style (test/fixtures/original) validates and runs
// unchanged; docs/migrating.md's worked example of a translated PHP directive is its NormaliseRequest.js.
// In-process (helpers/in-process-apis.ts); its job, which the router runs, is test/http/default-options-2.test.ts's.

const fixture = join(import.meta.dirname, '../fixtures/original');
const migrating = readFileSync(join(import.meta.dirname, '../../docs/migrating.md'), 'utf8');
let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({ apis: { jobs: fixture } });
});
afterAll(async () => anvil?.dispose());

describe("an API in the original's style", () => {
  it('validates without errors or warnings', () => {
    const result = anvilCli(['validate', fixture, '--json']);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, key: 'jobs', warnings: [] });
  });

  it("reads the original's system memory keys", async () => {
    const reply = await anvil.request('/jobs/about');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ org: 'localhost', env: 'dev', api: 'jobs', verb: 'GET', path: '/about' });
  });

  it("relays another endpoint's answer with Pull without target over the bus, adding one header", async () => {
    const reply = await anvil.request('/jobs/about/relayed');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.headers['x-relayed']).toBe('yes');
    expect(reply.json()).toEqual({ org: 'localhost', env: 'dev', api: 'jobs', verb: 'GET', path: '/about' });
  });

  it('checks a Pull answer against the map named like its target', async () => {
    expect((await anvil.request('/jobs/kinds/checked')).json()).toEqual({ checked: ['daily', 'weekly'] });
  });

  it("checks the body against the model first (Maps/jobRequestModel.json): 400 with the reason, in the original's words (compat: hefesto)", async () => {
    const reply = await anvil.request('/jobs/jobs', {
      method: 'POST',
      body: JSON.stringify({ kind: 'daily', dates: 'today' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: 'The properties must match schema: dates' });
    expect((await anvil.request('/jobs/jobs/nope/result')).status).toBe(404);
  });

  it('answers a bad request as the original did: the status and message the directive failed with', async () => {
    const reply = await anvil.request('/jobs/jobs', {
      method: 'POST',
      body: JSON.stringify({ dates: [] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: 'a job needs a kind' });
    expect((await anvil.request('/jobs/jobs/nope')).status).toBe(404);
  });

  it("is docs/migrating.md's worked example", () => {
    expect(migrating.startsWith('# Moving an API from the original\n')).toBe(true);
    expect(migrating).toContain(readFileSync(join(fixture, 'Directives/NormaliseRequest.js'), 'utf8'));
    expect(migrating).toContain('    Request: { directive: NormaliseRequest, source: $.message.bodyAsArray }\n');
  });
});
