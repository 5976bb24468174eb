import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { exchange, type RawReply } from '../helpers/raw-http.js';

// A header a directive sets must be one node:http can write: a name that is a token, a value without
// CR, LF, NUL or other control characters. Otherwise the directive fails (500, logged with its label
// and directive), and the client gets a well-formed 500 — never a split header or a broken status line.

const API = `key: headers
endpoints:
  get /from-query:
    Reply: { directive: ModifyMessage, headers: { x-echo: $.message.query.v }, body: { ok: true } }
  get /bad-name:
    Reply: { directive: ModifyMessage, headers: { x bad: "1" }, body: { ok: true } }
  get /custom:
    SetIt: { directive: SetHeader, name: $.message.query.name, value: $.message.query.value }
  get /custom-caught:
    TryIt: { directive: TrySetHeader, value: $.message.query.value }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

const SET_HEADER = `export default function (state, config) {
  state.message.headers = { [config.name]: config.value };
  state.message.body = { set: config.name };
}
`;

// A directive may catch the refusal and answer something else.
const TRY_SET_HEADER = `export default function (state, config) {
  try {
    state.message.headers = { 'x-try': config.value };
    state.message.body = { set: true };
  } catch (error) {
    state.message.headers = { 'x-try': 'refused' };
    state.message.body = { caught: error.message };
  }
}
`;

const DEBUG_API = API.replace('key: headers', 'key: headers-debug\ndebug: true');

let anvil: TestInstance;

beforeAll(async () => {
  const files = { 'Directives/SetHeader.js': SET_HEADER, 'Directives/TrySetHeader.js': TRY_SET_HEADER };
  anvil = await startInstance({
    apis: { headers: { 'api.yaml': API, ...files }, 'headers-debug': { 'api.yaml': DEBUG_API, ...files } },
  });
});
afterAll(async () => anvil?.dispose());

function get(path: string): Promise<RawReply> {
  return exchange(anvil.port, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
}

/** One well-formed 500 in the usual error shape, with nothing of the refused header in the head. */
function expectWellFormed500(reply: RawReply, error = 'Internal Server Error'): void {
  expect(reply.statusLines, reply.raw).toEqual(['HTTP/1.1 500 Internal Server Error']);
  const head = reply.raw.slice(0, reply.raw.indexOf('\r\n\r\n'));
  for (const line of head.split('\r\n').slice(1)) expect(line, reply.raw).toMatch(/^[A-Za-z0-9-]+: [^\r\n]*$/);
  expect(head.toLowerCase()).not.toContain('set-cookie');
  expect(head.toLowerCase()).toContain('x-correlation-id: ');
  expect(JSON.parse(reply.body), reply.raw).toEqual({ error });
}

function correlationId(reply: RawReply): string {
  return /x-correlation-id: ([^\r\n]+)/i.exec(reply.raw)![1]!;
}

/** The instance log's line for the directive's failure of that request. */
function logged(reply: RawReply): Promise<Record<string, any>> {
  const id = correlationId(reply);
  return eventually(() => anvil.logLines().find((l) => l.msg === 'directive error' && l.requestId === id));
}

describe('headers set by directives', () => {
  it('CR/LF in a value from ModifyMessage: a well-formed 500, and the directive is logged', async () => {
    const reply = await get('/headers/from-query?v=a%0d%0aSet-Cookie:%20stolen=1');
    expectWellFormed500(reply);
    const line = await logged(reply);
    expect(line).toMatchObject({ api: 'headers', label: 'Reply', directive: 'ModifyMessage', status: 500 });
    expect(line.message).toContain('the value of header "x-echo" contains a carriage return (CR)');
  });

  it('a lone LF, a NUL, or a character above U+00FF: the same', async () => {
    for (const [value, says] of [
      ['a%0ab', 'a line feed (LF)'],
      ['a%00b', 'a NUL'],
      ['a%E2%82%ACb', 'U+20AC'],
    ] as const) {
      const reply = await get(`/headers/from-query?v=${value}`);
      expectWellFormed500(reply);
      expect((await logged(reply)).message).toContain(says);
    }
  });

  it('an invalid header name from ModifyMessage: a well-formed 500', async () => {
    const reply = await get('/headers/bad-name');
    expectWellFormed500(reply);
    const line = await logged(reply);
    expect(line).toMatchObject({ label: 'Reply', directive: 'ModifyMessage', status: 500 });
    expect(line.message).toContain('the header name "x bad" is not a token');
  });

  it('a custom directive setting CR/LF in a value or a bad name: a well-formed 500, logged with the directive', async () => {
    const value = await get('/headers/custom?name=x-custom&value=1%0d%0aX-Injected:%202');
    expectWellFormed500(value);
    expect(value.raw.toLowerCase()).not.toContain('x-injected');
    expect(await logged(value)).toMatchObject({
      label: 'SetIt',
      directive: 'SetHeader',
      status: 500,
      message: expect.stringContaining('carriage return'),
    });

    for (const name of ['x:y', 'x%0d%0ay', '', 'x%20y', 'caf%C3%A9']) {
      const reply = await get(`/headers/custom?name=${name}&value=1`);
      expectWellFormed500(reply);
      expect(await logged(reply)).toMatchObject({
        label: 'SetIt',
        directive: 'SetHeader',
        message: expect.stringContaining('is not a token'),
      });
    }
  });

  it('with debug: true the client sees the reason', async () => {
    const reply = await get('/headers-debug/from-query?v=a%0d%0ab');
    expectWellFormed500(
      reply,
      'invalid response header: the value of header "x-echo" contains a carriage return (CR) at character 2',
    );
  });

  it('a custom directive may catch the refusal; nothing of the bad value is sent', async () => {
    const reply = await anvil.request('/headers/custom-caught?value=a%0d%0ab');
    expect(reply.status).toBe(200);
    expect(reply.headers['x-try']).toBe('refused');
    expect(reply.json().caught).toContain('carriage return');
  });

  it('valid values still pass: tabs, spaces, punctuation, obs-text', async () => {
    const reply = await anvil.request('/headers/from-query?v=a%09b%20!%22%23');
    expect(reply.status).toBe(200);
    expect(reply.headers['x-echo']).toBe('a\tb !"#');
    expect((await anvil.request('/headers/from-query?v=caf%C3%A9')).status).toBe(200);
    const custom = await anvil.request('/headers/custom?name=X-Fine_Name.1&value=ok');
    expect(custom.status).toBe(200);
    expect(custom.headers['x-fine_name.1']).toBe('ok');
  });

  it('the instance still serves afterwards', async () => {
    expect((await anvil.request('/headers/from-query?v=fine')).status).toBe(200);
  });
});
