import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { apiLog, waitFor } from '../helpers/wait-for.js';

// ExecuteIf, LocalCall, Event and EnableDebug (the original's catalogue, issue 25), in-process
// (helpers/in-process-apis.ts): flow-calls calls flow-callee from one engine to the other.

const fixtures = join(import.meta.dirname, '../fixtures/apis');
let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({
    apis: { 'flow-calls': join(fixtures, 'flow-calls'), 'flow-callee': join(fixtures, 'flow-callee') },
  });
});
afterAll(async () => anvil?.dispose());

describe('ExecuteIf', () => {
  it('runs `execute` with the remaining parameters only when `if` is truthy', async () => {
    const ran = await anvil.request('/flow-calls/if?go=yes');
    expect(ran.status).toBe(201);
    expect(ran.json()).toEqual({ ran: true });
    for (const query of ['', '?go=']) {
      const skipped = await anvil.request(`/flow-calls/if${query}`);
      expect(skipped.status, query).toBe(200);
      expect(skipped.json()).toEqual({ ran: false });
    }
  });

  it("runs the API's own directives, and the executed directive's errors are the entry's", async () => {
    const custom = await anvil.request('/flow-calls/if-custom?word=hello');
    expect(custom.status).toBe(203);
    expect(custom.json()).toEqual({ stamped: 'hello' });
    const thrown = await anvil.request('/flow-calls/if-throw');
    expect(thrown.status).toBe(409);
    expect(thrown.json()).toEqual({ error: 'conflict here' });
  });

  it("runs from a custom directive's state.run, but never a custom directive inside another", async () => {
    const builtin = await anvil.request('/flow-calls/if-nested?what=ModifyMessage');
    expect(builtin.status, builtin.text).toBe(206);
    const custom = await anvil.request('/flow-calls/if-nested?what=Stamp');
    expect(custom.status).toBe(500);
    const id = custom.headers['x-correlation-id'];
    const line = await waitFor(() => apiLog(anvil, 'flow-calls').find((l) => l.id === id), {
      what: 'the Log line of the nested call',
    });
    expect(line.errors).toEqual([
      expect.objectContaining({
        label: 'Nest',
        message: expect.stringContaining('Stamp: a custom directive cannot run from inside Nest'),
      }),
    ]);
  });

  it('checks a name from an alias, and its parameters, when it runs', async () => {
    const ok = await anvil.request('/flow-calls/if-dynamic?what=ModifyMessage');
    expect(ok.status).toBe(202);
    for (const [what, detail] of [
      ['Nope', 'there is no directive "Nope"'],
      ['Ping', 'parameter "status" of "ExecuteIf → Ping"'],
    ]) {
      const reply = await anvil.request(`/flow-calls/if-dynamic?what=${what}`);
      expect(reply.status, what).toBe(500);
      expect(reply.json()).toEqual({ error: 'Internal Server Error' });
      const id = reply.headers['x-correlation-id'];
      const line = await waitFor(() => apiLog(anvil, 'flow-calls').find((l) => l.id === id && l.debug !== true), {
        what: `the Log line of ?what=${what}`,
      });
      expect(line.errors).toEqual([
        expect.objectContaining({
          label: 'Maybe',
          directive: 'ExecuteIf',
          status: 500,
          message: expect.stringContaining(detail!),
        }),
      ]);
    }
  });

  it('refuses at deploy time a literal `execute` that does not exist or whose parameters do not fit', async () => {
    const yaml = [
      'key: bad-execute', //                                                                 1
      'endpoints:', //                                                                       2
      '  get /a:', //                                                                        3
      '    One: { directive: ExecuteIf, if: true, execute: ModifyMessage, status: "abc" }', // 4
      '  get /b:', //                                                                        5
      '    Two: { directive: ExecuteIf, if: true, execute: Pnig }', //                         6
      '  get /c:', //                                                                        7
      '    Three: { directive: ExecuteIf, if: true, execute: Ping, extra: 1 }', //            8
      '  get /d:', //                                                                        9
      '    Four: { directive: ExecuteIf, execute: Ping }', //                                 10
      '',
    ].join('\n');
    const reply = await anvil.deploy({ 'api.yaml': yaml });
    expect(reply.status).toBe(400);
    expect(reply.json().errors).toEqual([
      expect.stringMatching(/^api\.yaml:4:\d+ \[get \/a › One\] parameter "status" of ModifyMessage must be integer/),
      expect.stringMatching(/^api\.yaml:6:\d+ \[get \/b › Two\] unknown directive "Pnig" \(did you mean "Ping"\?\)/),
      expect.stringMatching(/^api\.yaml:8:\d+ \[get \/c › Three\] unknown parameter "extra" for Ping/),
      expect.stringMatching(/^api\.yaml:10:\d+ \[get \/d › Four\] parameter "if" of ExecuteIf is required/),
    ]);
  });
});

describe('LocalCall', () => {
  it("calls another API over the bus with the original's parameters; its answer becomes the message", async () => {
    const reply = await anvil.request('/flow-calls/local', {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'session=client-secret' },
      body: JSON.stringify({ name: 'Ann' }),
    });
    expect(reply.status, reply.text).toBe(207);
    expect(reply.headers['x-callee']).toBe('echo');
    expect(reply.headers['connection']).not.toBe('close');
    // The client's cookie is not sent on: only the headers the entry gives.
    expect(reply.json()).toEqual({
      verb: 'PUT',
      id: '7',
      q: 'search',
      skipped: null,
      one: '1',
      cookie: null,
      hello: 'Ann',
    });
  });

  it('reaches only over the bus (the callee refuses the public host), and answers >= 400 stay the message', async () => {
    expect((await anvil.request('/flow-callee/event', { method: 'POST' })).status).toBe(401);
    const refused = await anvil.request('/flow-calls/local-refused');
    expect(refused.status).toBe(404);
    expect(refused.json()).toEqual({ error: 'Not Found' });
    const missing = await anvil.request('/flow-calls/local-missing');
    expect(missing.status).toBe(404);
  });

  it('stops a cycle at the hop limit with 508', async () => {
    const reply = await anvil.request('/flow-calls/loop');
    expect(reply.status).toBe(508);
  });
});

describe('Event', () => {
  it("POSTs the current body to another API; its status and body replace the message's, its headers merge in", async () => {
    const reply = await anvil.request('/flow-calls/event', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n": 5}',
    });
    expect(reply.status, reply.text).toBe(202);
    expect(reply.headers['x-caller']).toBe('kept');
    expect(reply.headers['x-callee']).toBe('event');
    expect(reply.json()).toEqual({ got: 5, type: 'application/json' });
  });
});

describe('EnableDebug', () => {
  const secrets = {
    'api-key': 'secret-key-123',
    authorization: 'Bearer tok-abcdef',
    cookie: 'sid=cookie-value-9',
    'x-private': 'hush-hush',
  };

  function logText(): string {
    const dir = join(anvil.dataDir, 'localhost', 'dev', 'flow-calls', 'logs');
    return readdirSync(dir)
      .map((file) => readFileSync(join(dir, file), 'utf8'))
      .join('');
  }

  it("writes one trace line per request: every later entry's parameters and changes, AFTER_FLOW included", async () => {
    const reply = await anvil.request('/flow-calls/debug?pin=pin-zq4321&page=2', { headers: secrets });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({ one: 1 });
    const id = reply.headers['x-correlation-id'];
    const trace = await waitFor(() => apiLog(anvil, 'flow-calls').find((l) => l.id === id && l.debug === true), {
      what: 'the debug trace line',
    });
    expect(trace.route).toBe('get /debug');
    expect(trace.status).toBe(200);
    expect(trace.request).toMatchObject({ verb: 'GET', path: '/debug', query: { pin: '[redacted]', page: '2' } });
    expect(trace.request.headers).toMatchObject({
      'api-key': '[redacted]',
      authorization: '[redacted]',
      cookie: '[redacted]',
      'x-private': '[redacted]',
    });
    const steps = trace.steps as Array<Record<string, any>>;
    expect(steps.map((s) => `${s.label}/${s.pass}`)).toEqual([
      'Debug/main',
      'Key/main',
      'Note/main',
      'Connect/main',
      'Query/main',
      'Reply/main',
      'Log/after',
    ]);
    const step = (label: string) => steps.find((s) => s.label === label)!;
    expect(step('Key').params).toEqual({ expected: '[redacted]', current: '[redacted]' });
    expect(step('Note').memory).toEqual({ note: 'pin=[redacted]' });
    expect(step('Query').params).toMatchObject({ sql: 'select 1 as one', mode: 'get', target: 'row' });
    expect(step('Query').memory).toEqual({ row: { one: 1 } });
    expect(step('Reply').body).toEqual({ one: 1 });
    expect(typeof step('Reply').ms).toBe('number');
  });

  it('never writes a secret, and cuts long values', async () => {
    const long = 'x'.repeat(5000);
    const reply = await anvil.request('/flow-calls/debug-long', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', authorization: 'Basic QWxhZGRpbjpvcGVu' },
      body: long,
    });
    expect(reply.status).toBe(202);
    const id = reply.headers['x-correlation-id'];
    const trace = await waitFor(() => apiLog(anvil, 'flow-calls').find((l) => l.id === id && l.debug === true), {
      what: 'the debug trace line',
    });
    expect(trace.request.body).toBe(`${'x'.repeat(1024)}…(+${5000 - 1024} chars)`);
    expect(trace.steps.map((s: { label: string }) => s.label)).toEqual(['Debug', 'Reply', 'Log']);
    const text = logText();
    // Secrets no id, time or duration in the log can contain by chance (a release made at 14:32:19.2 is r-…-143219…).
    for (const secret of [
      ...Object.values(secrets).map((v) => v.replace(/^Bearer /, '')),
      'pin-zq4321',
      'QWxhZGRpbjpvcGVu',
    ])
      expect(text).not.toContain(secret);
  });

  it('traces nothing without EnableDebug', async () => {
    const reply = await anvil.request('/flow-calls/no-debug');
    const id = reply.headers['x-correlation-id'];
    await waitFor(() => apiLog(anvil, 'flow-calls').find((l) => l.id === id), { what: 'the Log line of /no-debug' });
    expect(apiLog(anvil, 'flow-calls').filter((l) => l.id === id && l.debug === true)).toEqual([]);
  });
});
