import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledApi } from '../helpers/compiled-static-api.js';
import { eventually, startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { exchange, type RawReply } from '../helpers/raw-http.js';
import { tarGz } from '../helpers/tarball.js';
import { waitFor } from '../helpers/wait-for.js';

// Seven former files whose tests need an instance with the default options and nothing of it but
// their own APIs (no metrics totals, no list of its APIs, no fault of a cell): one instance for
// them all, each former file's describes after a comment naming it, its APIs under keys of its own.
// (default-options-2.test.ts: two more, whose API keys these hold.)

// singleton-headers
// Headers a request may carry once (Host), or once with one value (Content-Length, Content-Type,
// Authorization, the admin credentials, api-key, x-correlation-id): a repeat that could mean two
// things is a 400 before any API sees it. Raw sockets: a normal client does not send these.

const PING_API = `key: ping
endpoints:
  get /ping:
    Ping: { directive: Ping }
  post /echo:
    Reply: { directive: ModifyMessage, body: $.message.body }
`;

// response-header-syntax
// A header a directive sets must be one node:http can write: a name that is a token, a value without
// CR, LF, NUL or other control characters. Otherwise the directive fails (500, logged with its label
// and directive), and the client gets a well-formed 500 — never a split header or a broken status line.

const HEADERS_API = `key: headers
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

const DEBUG_API = HEADERS_API.replace('key: headers', 'key: headers-debug\ndebug: true');

// spec-examples
// The examples of SPEC §6 (publishing, through the admin host) and §8 (jobs, queued and run by the
// router) of test/fixtures/spec-examples/, over HTTP against a real instance; the other sections'
// run in-process: test/directives/spec-examples.test.ts.

const EXAMPLES = join(import.meta.dirname, '../fixtures/spec-examples');

// compiled-static
// ServeCompiledStatic across a deploy (ORIGINAL.md, flaw 13 fixed: the `r` of the URL must be the
// release that serves it); what it serves within one release runs in-process:
// test/directives/compiled-static.test.ts.

// openapi-endpoint
const secured = join(import.meta.dirname, '../../apis/secured');

// unawaited-runs
// Issue 42: `state.run` work a custom directive starts stops with its call. A directive that fires
// thousands of LocalCalls it never awaits and returns (or breaches its CPU limit) used to have every
// one of them run after its call was over; now at most MAX_PENDING_RUNS (256) may be under way, of
// which MAX_RUNNING_RUNS (16) run at once, and those not begun when the call ends are dropped.

const MAX_PENDING_RUNS = 256;
const MAX_RUNNING_RUNS = 16;

const FLOOD_FILES = {
  'api.yaml': `key: flood
limits: { cpuMs: 1000 }
endpoints:
  get /run/{tag}:
    Flood: { directive: Flood, tag: $.message.pathParam.tag, spin: false }
  get /spin/{tag}:
    Flood: { directive: Flood, tag: $.message.pathParam.tag, spin: true }
  get /awaited/{tag}:
    All: { directive: AwaitAll, tag: $.message.pathParam.tag, n: 100 }
`,
  'Directives/AwaitAll.js': `export default async function (state, config) {
  const hit = { method: 'POST', path: '/counter/hit/' + config.tag };
  await Promise.all(Array.from({ length: config.n }, () => state.run('LocalCall', hit)));
  state.message.body = { done: config.n };
}
`,
  // One awaited call first (the count is at least 1 once the call is over), then 20 000 it
  // never awaits, until the host refuses one.
  'Directives/Flood.js': `export default async function (state, config) {
  const hit = { method: 'POST', path: '/counter/hit/' + config.tag };
  await state.run('LocalCall', hit);
  let started = 0;
  let refused = null;
  for (let i = 0; i < 20000; i++) {
    try {
      state.run('LocalCall', hit);
      started++;
    } catch (error) {
      refused = { status: error.status, message: error.message };
      break;
    }
  }
  if (config.spin) for (;;) {}
  state.message.body = { started, refused };
}
`,
};

const COUNTER_API = `key: counter
endpoints:
  post /hit/{tag}:
    Table: { directive: DatabaseQuery, sql: "CREATE TABLE IF NOT EXISTS hits (tag TEXT)", mode: run }
    Count: { directive: DatabaseQuery, sql: "INSERT INTO hits (tag) VALUES (?)", params: [$.message.pathParam.tag], mode: run }
  get /count/{tag}:
    Table: { directive: DatabaseQuery, sql: "CREATE TABLE IF NOT EXISTS hits (tag TEXT)", mode: run }
    Read: { directive: DatabaseQuery, sql: "SELECT COUNT(*) AS n FROM hits WHERE tag = ?", params: [$.message.pathParam.tag], target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
`;

let anvil: TestInstance;

beforeAll(async () => {
  const files = { 'Directives/SetHeader.js': SET_HEADER, 'Directives/TrySetHeader.js': TRY_SET_HEADER };
  anvil = await startInstance({
    apis: {
      // singleton-headers
      ping: { 'api.yaml': PING_API },
      // response-header-syntax
      headers: { 'api.yaml': HEADERS_API, ...files },
      'headers-debug': { 'api.yaml': DEBUG_API, ...files },
      // spec-examples
      notes: join(EXAMPLES, 'notes'),
      jobs: join(EXAMPLES, 'jobs'),
      // compiled-static
      compiled: compiledApi('red'),
      // openapi-endpoint
      secured,
      // actor-start-failure
      broken: { 'api.yaml': 'key: broken\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' },
      fine: { 'api.yaml': 'key: fine\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' },
      // unawaited-runs
      flood: FLOOD_FILES,
      counter: { 'api.yaml': COUNTER_API },
    },
  });
});
afterAll(async () => anvil?.dispose());

// —— singleton-headers ——

function expectBadRequest(reply: RawReply, says: string): void {
  expect(reply.statusLines, reply.raw).toEqual(['HTTP/1.1 400 Bad Request']);
  expect(reply.raw.toLowerCase()).toContain('content-type: application/json');
  // The router's own check (ANVIL_ERR_BAD_REQUEST_HEAD), or node:http's parser before it (ANVIL_ERR_BAD_REQUEST).
  expect(JSON.parse(reply.body), reply.raw).toEqual({
    error: expect.stringContaining(says),
    code: expect.stringMatching(/^ANVIL_ERR_BAD_REQUEST(_HEAD)?$/),
  });
}

async function expectLogged(says: string): Promise<void> {
  await eventually(() =>
    anvil.logLines().some((l) => l.msg.startsWith('request refused: 400') && String(l.reason).includes(says)),
  );
}

async function expectHealthy(): Promise<void> {
  const reply = await anvil.request('/ping/ping');
  expect(reply.status).toBe(200);
  expect(reply.json()).toEqual({ message: 'pong' });
}

describe('singleton request headers', () => {
  it('two Host headers: 400 and a log line, whether they agree or not', async () => {
    for (const second of ['admin.localhost', 'localhost', 'LOCALHOST']) {
      const reply = await exchange(anvil.port, `GET /ping/ping HTTP/1.1\r\nHost: localhost\r\nHost: ${second}\r\n\r\n`);
      expectBadRequest(reply, 'more than one Host header');
      expect(reply.raw).not.toContain('pong');
    }
    // Names are case-insensitive.
    expectBadRequest(
      await exchange(anvil.port, 'GET /ping/ping HTTP/1.1\r\nhost: localhost\r\nHOST: localhost\r\n\r\n'),
      'more than one Host header',
    );
    await expectLogged('more than one Host header');
    await expectHealthy();
  });

  it('two Host headers on the admin host cannot reach a management call', async () => {
    const request =
      'GET /anvil/api HTTP/1.1\r\nHost: localhost\r\nHost: admin.localhost\r\n' +
      `public-host: localhost\r\npublic-host-key: ${TEST_KEY}\r\n\r\n`;
    const reply = await exchange(anvil.port, request);
    expectBadRequest(reply, 'more than one Host header');
    expect(reply.raw).not.toContain('"ping"');
  });

  it('two Content-Length headers with different values: 400 (node:http answers it)', async () => {
    const reply = await exchange(
      anvil.port,
      'POST /ping/echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!',
    );
    expectBadRequest(reply, 'Content-Length');
    expect(reply.raw).not.toContain('hello');
    await eventually(() =>
      anvil.logLines().some((l) => l.msg === 'request refused: 400' && String(l.reason).includes('Content-Length')),
    );
    await expectHealthy();
  });

  it('other singleton headers repeated with different values: 400 naming the header', async () => {
    const cases: Array<[string, string, string]> = [
      ['content-type', 'application/json', 'text/plain'],
      ['authorization', 'Bearer a', 'Bearer b'],
      ['api-key', 'first', 'second'],
      ['x-correlation-id', 'one', 'two'],
    ];
    for (const [name, first, second] of cases) {
      const reply = await exchange(
        anvil.port,
        `POST /ping/echo HTTP/1.1\r\nHost: localhost\r\n${name}: ${first}\r\nContent-Length: 2\r\n${name.toUpperCase()}: ${second}\r\n\r\n{}`,
      );
      expectBadRequest(reply, `the ${name} header is repeated with different values`);
      await expectLogged(`the ${name} header`);
    }
    await expectHealthy();
  });

  it('the admin credentials repeated with different values: 400, not a 401 or a guess', async () => {
    const other = 'another-key-0123456789';
    for (const [name, first, second] of [
      ['public-host', 'localhost', 'elsewhere'],
      ['public-host-key', TEST_KEY, other],
    ] as const) {
      const credentials = name === 'public-host' ? `public-host-key: ${TEST_KEY}\r\n` : 'public-host: localhost\r\n';
      const reply = await exchange(
        anvil.port,
        `GET /anvil/api HTTP/1.1\r\nHost: admin.localhost\r\n${credentials}${name}: ${first}\r\n${name}: ${second}\r\n\r\n`,
      );
      expectBadRequest(reply, `the ${name} header is repeated with different values`);
    }
  });

  it('the same value twice is not a conflict, and one of each is an ordinary request', async () => {
    const twice = await exchange(
      anvil.port,
      'POST /ping/echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello',
    );
    expect(twice.statusLines, twice.raw).toEqual(['HTTP/1.1 200 OK']);
    expect(twice.body).toBe('hello');
    const reply = await anvil.request('/ping/echo', {
      method: 'POST',
      body: '{"a":1}',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer x',
        'api-key': 'k',
        'x-correlation-id': 'c',
      },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ a: 1 });
  });
});

// —— response-header-syntax ——

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

// —— spec-examples ——

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

// —— compiled-static ——

async function page(): Promise<{ css: string; js: string }> {
  const reply = await anvil.request('/compiled/page');
  expect(reply.status).toBe(200);
  return reply.json();
}

describe('ServeCompiledStatic', () => {
  it('serves only the release now serving: the URL of an earlier one is a 404', async () => {
    const before = (await page()).css;
    const deployed = await anvil.admin('/anvil/api', {
      method: 'POST',
      body: tarGz(compiledApi('blue')),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(deployed.status).toBe(201);
    const after = await waitFor(
      async () => {
        const css = (await page()).css;
        return css !== before ? css : null;
      },
      { what: 'the new release to serve' },
    );
    expect((await anvil.request(after)).text).toBe('body { color: blue; }\n.theme { margin: 0; }');
    expect((await anvil.request(before)).status).toBe(404);
  });
});

// —— openapi-endpoint ——

describe('GET /anvil/api/<key>/openapi.json', () => {
  it('describes the current release as a valid OpenAPI 3.1 document, served under /<key>', async () => {
    const record = (await anvil.admin('/anvil/api/secured')).json();
    const reply = await anvil.admin('/anvil/api/secured/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    const document = reply.json();
    expect(await new Validator().validate(document)).toMatchObject({ valid: true });
    expect(document.info).toMatchObject({ title: 'secured', version: record.release });
    expect(document.servers).toEqual([{ url: '/secured' }]);
    expect(document.paths['/status'].get.security).toEqual([{ 'header.api-key': [] }]);
  });

  it('answers 404 for an unknown API, 405 for another method, 401 without the public host key', async () => {
    expect((await anvil.admin('/anvil/api/nope/openapi.json')).status).toBe(404);
    expect((await anvil.admin('/anvil/api/secured/other.json')).status).toBe(404);
    const post = await anvil.admin('/anvil/api/secured/openapi.json', { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect((await anvil.request('/anvil/api/secured/openapi.json', { host: 'admin.localhost' })).status).toBe(401);
  });
});

// —— actor-start-failure ——

describe('an API whose release cannot load', () => {
  it('answers 502 instead of hanging, is logged, and leaves other APIs alone', async () => {
    // Fault injection: damage the stored release before its first request starts a thread.
    const releases = join(anvil.dataDir, '.anvil', 'releases', 'localhost', 'broken');
    const [release] = readdirSync(releases);
    writeFileSync(join(releases, release!, 'compiled.json'), '{ not json');

    const reply = await anvil.request('/broken/ping');
    expect(reply.status).toBe(502);
    expect(reply.json()).toEqual({ error: 'Bad Gateway: the API could not start', code: 'ANVIL_ERR_ACTOR_FAILED' });
    await eventually(() =>
      anvil.logLines().some((l) => l.msg === 'actor thread failed to start' && String(l.actor).includes('/broken@')),
    );
    expect((await anvil.request('/fine/ping')).json()).toEqual({ message: 'pong' });
    expect(anvil.child.exitCode).toBeNull();
  });
});

// —— unawaited-runs ——

async function count(tag: string): Promise<number> {
  const reply = await anvil.request(`/counter/count/${tag}`);
  expect(reply.status).toBe(200);
  return (reply.json() as Array<{ n: number }>)[0]!.n;
}

/**
 * The count once it no longer grows: three reads in a row give the same number. (The bound checked
 * holds at every moment with the fix; before it, thousands of calls kept arriving for seconds.)
 */
async function settledCount(tag: string): Promise<number> {
  let last = await count(tag);
  let same = 0;
  for (let round = 0; round < 200 && same < 3; round++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await count(tag);
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return last;
}

describe('state.run work stops with its call', () => {
  it('a directive that leaves 20 000 LocalCalls un-awaited: the 257th is refused in the isolate, and the count stops at the few that had begun', async () => {
    const reply = await anvil.request('/flood/run/returned');
    expect(reply.status).toBe(200);
    const body = reply.json() as { started: number; refused: { status: number; message: string } | null };
    expect(body.started).toBe(MAX_PENDING_RUNS);
    expect(body.refused?.status).toBe(500);
    expect(body.refused?.message).toContain(`already has ${MAX_PENDING_RUNS} runs under way`);
    const ran = await settledCount('returned');
    // The awaited one, and at most the runs that had begun when the call returned.
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(ran).toBeLessThanOrEqual(1 + MAX_RUNNING_RUNS);
  });

  it('after a CPU breach, what the call started and had not begun never runs', async () => {
    const reply = await anvil.request('/flood/spin/breached');
    expect(reply.status).toBe(500);
    const ran = await settledCount('breached');
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(ran).toBeLessThanOrEqual(1 + MAX_RUNNING_RUNS);
  });

  it('runs the call awaits all run, 16 at a time, the others in turn', async () => {
    const reply = await anvil.request('/flood/awaited/all');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ done: 100 });
    expect(await count('all')).toBe(100);
  });

  it('the API serves on: the same request again gives the same bound', async () => {
    expect((await anvil.request('/flood/run/again')).status).toBe(200);
    expect(await settledCount('again')).toBeLessThanOrEqual(1 + MAX_RUNNING_RUNS);
  });
});
