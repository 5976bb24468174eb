import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeApiResponse } from '../../src/front/edge/http-response.js';
import type { OutgoingResponse } from '../../src/shared/protocol/requests.js';
import { ResponseBuffer } from '../../src/front/edge/response-buffer.js';
import { exchange } from '../helpers/raw-http.js';

// The router's last line: the engine checks every header a directive sets, but should an actor's
// response still carry a head node:http refuses, the client gets a well-formed 502 (it used to get
// "HTTP/1.1 502 OK": the refused writeHead had already set the reason phrase).

let server: Server;
let port: number;
let next: OutgoingResponse;
const refusals: Array<string | null> = [];

beforeAll(async () => {
  const buffer = new ResponseBuffer(64 * 1024 * 1024, () => {});
  server = createServer((_req, res) =>
    refusals.push(
      writeApiResponse(
        res,
        next,
        buffer,
        { host: 'localhost', key: 'test', quotas: { responseHeaders: 10, responseHeaderBytes: 1024 } },
        'corr-1',
      ),
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function answer(response: OutgoingResponse) {
  next = response;
  return exchange(port, 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
}

describe('writeApiResponse', () => {
  it('a header value with CR/LF: 502 Bad Gateway with a proper status line, nothing of the header sent', async () => {
    const reply = await answer({
      status: 200,
      headers: ['x-ok', 'yes', 'x-bad', 'a\r\nset-cookie: stolen=1'],
      body: 'secret',
    });
    expect(reply.statusLines).toEqual(['HTTP/1.1 502 Bad Gateway']);
    expect(reply.raw.toLowerCase()).not.toContain('set-cookie');
    expect(reply.raw).not.toContain('secret');
    expect(reply.raw.toLowerCase()).toContain('x-correlation-id: corr-1');
    expect(JSON.parse(reply.body)).toEqual({
      error: 'Bad Gateway: the API produced an invalid response head',
      code: 'ANVIL_ERR_RESPONSE_HEAD',
    });
    expect(refusals.at(-1)).toContain('x-bad');
  });

  it('an invalid header name or status: the same', async () => {
    for (const response of [
      { status: 201, headers: ['bad name', 'x'], body: null },
      { status: 1000, headers: [], body: 'x' },
    ]) {
      const reply = await answer(response);
      expect(reply.statusLines).toEqual(['HTTP/1.1 502 Bad Gateway']);
      expect(refusals.at(-1)).not.toBeNull();
    }
  });

  it('a head the engine should have refused (1xx, too many header lines, too many header bytes): 502, nothing of it sent', async () => {
    for (const [response, code] of [
      [{ status: 101, headers: ['x-ok', 'yes'], body: 'x' }, 'ANVIL_ERR_INFORMATIONAL_STATUS'],
      [
        { status: 200, headers: Array.from({ length: 11 }, (_, i) => ['set-cookie', `c${i}=1`]).flat(), body: 'x' },
        'ANVIL_ERR_QUOTA_RESPONSE_HEADERS',
      ],
      [{ status: 200, headers: ['x-big', 'b'.repeat(1100)], body: 'x' }, 'ANVIL_ERR_QUOTA_RESPONSE_HEADER_BYTES'],
    ] as const) {
      const reply = await answer({ ...response, headers: [...response.headers] });
      expect(reply.statusLines).toEqual(['HTTP/1.1 502 Bad Gateway']);
      expect(reply.raw).not.toContain('set-cookie');
      expect(reply.raw).not.toContain('bbbb');
      expect(JSON.parse(reply.body)).toEqual({
        error: `Bad Gateway: the API produced a response head the router does not send (${code})`,
        code: 'ANVIL_ERR_RESPONSE_HEAD',
      });
      expect(refusals.at(-1)).toContain(code);
    }
  });

  it('a valid response is written as it is', async () => {
    const reply = await answer({ status: 201, headers: ['x-ok', 'yes'], body: 'made' });
    expect(reply.statusLines).toEqual(['HTTP/1.1 201 Created']);
    expect(reply.body).toBe('made');
    expect(refusals.at(-1)).toBeNull();
  });
});
