import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { exchange, type RawReply } from '../helpers/raw-http.js';

// Headers a request may carry once (Host), or once with one value (Content-Length, Content-Type,
// Authorization, the admin credentials, api-key, x-correlation-id): a repeat that could mean two
// things is a 400 before any API sees it. Raw sockets: a normal client does not send these.

const API = `key: ping
endpoints:
  get /ping:
    Ping: { directive: Ping }
  post /echo:
    Reply: { directive: ModifyMessage, body: $.message.body }
`;

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({ apis: { ping: { 'api.yaml': API } } });
});
afterAll(async () => anvil?.dispose());

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
