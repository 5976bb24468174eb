import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { eventually } from '../helpers/instance.js';

const fixtures = join(import.meta.dirname, '../fixtures/apis');
let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({ apis: { flow: join(fixtures, 'flow'), aliases: join(fixtures, 'aliases') } });
});
afterAll(async () => anvil?.dispose());

function logLines(api: string): Array<Record<string, any>> {
  const dir = join(anvil.dataDir, 'localhost', 'dev', api, 'logs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((file) =>
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line)),
  );
}

describe('the flow of SPEC §4', () => {
  it('runs before, the endpoint and after as one list, NORMAL_FLOW entries only', async () => {
    const reply = await anvil.request('/flow/ok');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ trace: 'b1,e1,a1,both,', error: null });
  });

  it('on an error skips the rest of NORMAL_FLOW and runs only the ERROR_FLOW entries that follow', async () => {
    const reply = await anvil.request('/flow/fail');
    // E2 and A1 (NORMAL_FLOW, after the throw) did not run; EarlyError (ERROR_FLOW, before it) did not either.
    expect(reply.json()).toEqual({ trace: 'b1,e1,onerror,both,', error: { status: 418, message: "I'm a teapot" } });
    // Reply rendered the error with status 200, but an error never leaves as a 2xx.
    expect(reply.status).toBe(418);
  });

  it('renders the error itself when no ERROR_FLOW entry changed the response', async () => {
    const reply = await anvil.request('/aliases/typed?code=422');
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({ error: 'typed from an alias' });
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
  });

  it('sends a generic message for statuses >= 500 (the real one goes to the log)', async () => {
    const reply = await anvil.request('/aliases/typed?code=503');
    expect(reply.status).toBe(503);
    expect(reply.json()).toEqual({ error: 'Service Unavailable' });
    await eventually(() => anvil.output().includes('typed from an alias'));
  });

  it('runs AFTER_FLOW after the response was written, without changing it, and Log records the order', async () => {
    const reply = await anvil.request('/flow/ok');
    expect(reply.status).toBe(200);
    expect(reply.text).not.toContain('changed after');
    const id = reply.headers['x-correlation-id'];
    const line = await eventually(() => logLines('flow').find((l) => l.id === id));
    expect(line.entries).toEqual([
      'B1',
      'E1',
      'A1',
      'Both',
      'Reply',
      'Late (after)',
      'EnableSlow (after)',
      'Log (after)',
    ]);
    expect(line.status).toBe(200);
    expect(line).toMatchObject({ verb: 'GET', path: '/ok', route: 'get /ok', correlationId: id });
  });

  it('answers before a slow AFTER_FLOW entry has finished', async () => {
    const reply = await anvil.request('/flow/slow-after');
    expect(reply.status).toBe(200);
    const id = reply.headers['x-correlation-id'];
    // The response is here; the Log entry behind a 1.5 s Delay in AFTER_FLOW has not run yet.
    expect(logLines('flow').some((l) => l.id === id)).toBe(false);
    const line = await eventually(() => logLines('flow').find((l) => l.id === id));
    expect(line.entries).toContain('SlowAfterReally (after)');
    expect(line.entries.at(-1)).toBe('Log (after)');
  });

  it('logs the errors of each directive', async () => {
    const reply = await anvil.request('/flow/fail');
    const id = reply.headers['x-correlation-id'];
    const line = await eventually(() => logLines('flow').find((l) => l.id === id));
    expect(line.status).toBe(418);
    expect(line.errors).toEqual([{ label: 'Boom', directive: 'ThrowError', status: 418, message: "I'm a teapot" }]);
  });
});

describe('custom groups', () => {
  it('are enabled at run time, by name, case-insensitively', async () => {
    const on = await anvil.request('/flow/save', {
      method: 'POST',
      body: JSON.stringify({ save: true }),
      headers: { 'content-type': 'application/json' },
    });
    expect(on.json().trace).toBe('b1,saved,a1,both,');
    const off = await anvil.request('/flow/save', { method: 'POST', body: JSON.stringify({ save: false }) });
    expect(off.json().trace).toBe('b1,a1,both,');
    const notJson = await anvil.request('/flow/save', { method: 'POST', body: 'save=true' });
    expect(notJson.json().trace).toBe('b1,a1,both,');
  });

  it('are disabled by name, and disableAll stops every entry', async () => {
    const toggled = await anvil.request('/flow/toggle');
    expect(toggled.json().trace).toBe('b1,more,a1,both,');
    const stopped = await anvil.request('/flow/stop');
    expect(stopped.status).toBe(200);
    expect(stopped.text).toBe('');
    expect(stopped.headers['x-correlation-id']).toBeTruthy();
  });
});

describe('aliases of SPEC §5', () => {
  it('resolve every form, with missing keys as null', async () => {
    const body = JSON.stringify({ nested: { value: 42 } });
    const reply = await anvil.request('/aliases/all/7?q=search&r=1&r=2', {
      method: 'POST',
      body,
      headers: { 'x-custom': 'custom header', 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(200);
    const got = reply.json();
    const id = reply.headers['x-correlation-id'];
    expect(got).toMatchObject({
      pathParam: '7',
      pathParams: '7',
      header: 'custom header',
      query: 'search',
      queryParam: 'search',
      repeated: ['1', '2'],
      rawBody: body,
      bodyField: 42,
      verb: 'POST',
      path: '/all/7',
      status: 200,
      map: { nested: { deep: 'from the map' }, list: [1, 2] },
      mapField: 'from the map',
      memory: 'aliases',
      memoryNested: 'search',
      id,
      missingMemory: null,
      missingHeader: null,
      missingQuery: null,
      missingBody: null,
      missingMap: null,
      list: ['search', 'literal', 3],
    });
    expect(got.system).toMatchObject({
      api: 'aliases',
      env: 'dev',
      host: 'localhost',
      localhost: anvil.localBaseUrl,
      definitionVerb: 'post',
      definitionPath: '/all/{id}',
      ip: '127.0.0.1',
      correlationId: id,
    });
    expect(got.system.release).toMatch(/^r-\d{8}-\d{9}-[0-9a-f]{4}$/);
  });

  it('type-check values that came from aliases when the entry runs', async () => {
    const reply = await anvil.request('/aliases/typed?code=not-a-number');
    expect(reply.status).toBe(500);
    expect(reply.json()).toEqual({ error: 'Internal Server Error' });
  });

  it('PropagateCorrelationId reuses a sane incoming id and refuses an odd one', async () => {
    const reused = await anvil.request('/aliases/correlation', { headers: { 'x-correlation-id': 'abc-123' } });
    expect(reused.json()).toEqual({ correlationId: 'abc-123' });
    expect(reused.headers['x-correlation-id']).toBe('abc-123');
    const odd = await anvil.request('/aliases/correlation', { headers: { 'x-correlation-id': 'x'.repeat(500) } });
    expect(odd.json().correlationId).not.toBe('x'.repeat(500));
    expect(odd.headers['x-correlation-id']).toBe(odd.json().correlationId);
  });

  it('treat __proto__ as a plain memory key (no prototype pollution)', async () => {
    const reply = await anvil.request('/aliases/proto');
    expect(reply.json()).toEqual({ own: 'yes', inherited: null });
  });

  it('never echoes request headers or body unless a directive copies them', async () => {
    const reply = await anvil.request('/flow/ok', { headers: { cookie: 'session=secret', authorization: 'Bearer t' } });
    expect(reply.headers['set-cookie']).toBeUndefined();
    expect(reply.headers.cookie).toBeUndefined();
    expect(reply.headers.authorization).toBeUndefined();
  });
});
