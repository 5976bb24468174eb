import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { exchange, type RawReply } from '../helpers/raw-http.js';
import { tarGz } from '../helpers/tarball.js';

// Garbage on the wire (raw TCP): the router answers 4xx or closes the connection, and never falls over.

const ECHO = `key: ping
endpoints:
  get /ping:
    Ping: { directive: Ping }
  post /echo:
    Reply: { directive: ModifyMessage, body: $.message.body }
`;

/** Answered 4xx (with our JSON error shape) or closed without a word. */
function expectRefusedOrClosed(reply: RawReply): void {
  if (reply.status === null) {
    expect(reply.raw).toBe('');
    return;
  }
  expect(reply.status, reply.raw).toBeGreaterThanOrEqual(400);
  expect(reply.status, reply.raw).toBeLessThan(500);
  expect(reply.statusLines, reply.raw).toHaveLength(1);
}

function expectJsonError(reply: RawReply, status: number, code: unknown): void {
  expect(reply.status, reply.raw).toBe(status);
  expect(reply.statusLines, reply.raw).toHaveLength(1);
  expect(JSON.parse(reply.body), reply.raw).toEqual({ error: expect.any(String), code });
}

let anvil: TestInstance;

async function expectHealthy(instance: TestInstance = anvil): Promise<void> {
  const reply = await instance.request('/ping/ping');
  expect(reply.status).toBe(200);
  expect(reply.json()).toEqual({ message: 'pong' });
  expect(instance.child.exitCode).toBeNull();
  expect(instance.child.signalCode).toBeNull();
}

beforeAll(async () => {
  anvil = await startInstance({ apis: { ping: { 'api.yaml': ECHO } } });
});
afterAll(async () => anvil?.dispose());

const HOST = 'Host: localhost\r\n';

describe('garbage on a raw socket', () => {
  it('a request line of random bytes: 400 or closed', async () => {
    for (let i = 0; i < 20; i++) {
      const reply = await exchange(anvil.port, Buffer.concat([randomBytes(256), Buffer.from('\r\n\r\n')]));
      expectRefusedOrClosed(reply);
    }
    // Random bytes starting with a plausible request line, too.
    const reply = await exchange(
      anvil.port,
      Buffer.concat([Buffer.from('GET /'), randomBytes(64), Buffer.from(' HTTP/1.1\r\n\r\n')]),
    );
    expectRefusedOrClosed(reply);
    await expectHealthy();
  });

  it('a header without a colon: 400', async () => {
    expectJsonError(
      await exchange(anvil.port, `GET /ping/ping HTTP/1.1\r\n${HOST}ThisHeaderHasNoColon\r\n\r\n`),
      400,
      'ANVIL_ERR_BAD_REQUEST',
    );
    expectJsonError(
      await exchange(anvil.port, `GET /ping/ping HTTP/1.1\r\n${HOST}Bad Name: x\r\n\r\n`),
      400,
      'ANVIL_ERR_BAD_REQUEST',
    );
    expectJsonError(
      await exchange(anvil.port, `GET /ping/ping HTTP/1.1\r\n${HOST}X-Nul: a\0b\r\n\r\n`),
      400,
      'ANVIL_ERR_BAD_REQUEST',
    );
    await expectHealthy();
  });

  it('a header block over 16 KiB: 431', async () => {
    const one = await exchange(anvil.port, `GET /ping/ping HTTP/1.1\r\n${HOST}X-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
    expectJsonError(one, 431, 'ANVIL_ERR_HEADERS_TOO_LARGE');
    const many = Array.from({ length: 400 }, (_, i) => `X-Header-${i}: ${'b'.repeat(50)}\r\n`).join('');
    expectJsonError(
      await exchange(anvil.port, `GET /ping/ping HTTP/1.1\r\n${HOST}${many}\r\n`),
      431,
      'ANVIL_ERR_HEADERS_TOO_LARGE',
    );
    await expectHealthy();
  });

  it('an invalid content-length: 400', async () => {
    for (const value of ['abc', '-5', '1.5', '0x10', '99999999999999999999999']) {
      const reply = await exchange(
        anvil.port,
        `POST /ping/echo HTTP/1.1\r\n${HOST}Content-Length: ${value}\r\n\r\nhello`,
      );
      expectJsonError(reply, 400, 'ANVIL_ERR_BAD_REQUEST');
    }
    const twoLengths = await exchange(
      anvil.port,
      `POST /ping/echo HTTP/1.1\r\n${HOST}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!`,
    );
    expectJsonError(twoLengths, 400, 'ANVIL_ERR_BAD_REQUEST');
    await expectHealthy();
  });

  it('a chunked body with a bad chunk size: 400', async () => {
    for (const size of ['zz', '-1', 'ffffffffffffffffffff', '']) {
      const reply = await exchange(
        anvil.port,
        `POST /ping/echo HTTP/1.1\r\n${HOST}Transfer-Encoding: chunked\r\n\r\n${size}\r\nhello\r\n0\r\n\r\n`,
      );
      expectJsonError(reply, 400, 'ANVIL_ERR_BAD_REQUEST');
    }
    await expectHealthy();
  });

  it('content-length together with chunked: refused, and the smuggled request is not answered', async () => {
    const smuggled = `GET /ping/ping HTTP/1.1\r\n${HOST}\r\n`;
    const reply = await exchange(
      anvil.port,
      `POST /ping/echo HTTP/1.1\r\n${HOST}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
    );
    expectRefusedOrClosed(reply);
    expect(reply.raw).not.toContain('pong');
    await expectHealthy();
  });

  it('HTTP/0.9-style requests: 4xx or closed', async () => {
    expectRefusedOrClosed(await exchange(anvil.port, 'GET /\r\n', { end: true }));
    expectRefusedOrClosed(await exchange(anvil.port, 'GET /\r\n\r\n'));
    expectRefusedOrClosed(await exchange(anvil.port, 'GET /ping/ping\r\n\r\n'));
    await expectHealthy();
  });

  it('a request target that is not a path: 400', async () => {
    // connection: close only so that we need not wait for the keep-alive timeout.
    const get = (target: string) => exchange(anvil.port, `GET ${target} HTTP/1.1\r\n${HOST}Connection: close\r\n\r\n`);
    for (const target of ['*', 'ping/ping', 'http://localhost/ping/ping'])
      expectJsonError(await get(target), 400, expect.stringMatching(/^ANVIL_ERR_BAD_(TARGET|REQUEST)$/));
    expectRefusedOrClosed(await get('//ping/ping'));
    await expectHealthy();
  });

  it('a client that disappears mid-body, on an API and on a deploy', async () => {
    for (let i = 0; i < 10; i++) {
      await exchange(
        anvil.port,
        [`POST /ping/echo HTTP/1.1\r\n${HOST}Content-Length: 100000\r\n\r\n`, 'x'.repeat(1000)],
        { destroy: true },
      );
      await exchange(
        anvil.port,
        [`POST /ping/echo HTTP/1.1\r\n${HOST}Transfer-Encoding: chunked\r\n\r\n`, '100\r\n', 'y'.repeat(100)],
        { destroy: true },
      );
    }
    const upload =
      `POST /anvil/api HTTP/1.1\r\nHost: admin.localhost\r\npublic-host: localhost\r\npublic-host-key: ${TEST_KEY}\r\n` +
      'Content-Type: application/gzip\r\nContent-Length: 200000\r\n\r\n';
    // A gzip header, then the connection is gone.
    await exchange(
      anvil.port,
      [upload, Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03]), randomBytes(5000)],
      { destroy: true },
    );
    await expectHealthy();
    // The half upload left nothing behind.
    await eventually(() => readdirSync(join(anvil.dataDir, '.anvil', 'tmp')).length === 0);
    expect((await anvil.admin('/anvil/api')).json()).toEqual(['ping']);
  });

  it('1000 half-open connections closed at once', async () => {
    const sockets = await Promise.all(
      Array.from(
        { length: 1000 },
        (_, i) =>
          new Promise<net.Socket>((resolve, reject) => {
            const socket = net.connect(anvil.port, '127.0.0.1');
            socket.once('error', reject);
            // Half a request: the request line and part of the headers.
            socket.write(
              i % 2 === 0
                ? 'GET /ping/ping HTTP/1.1\r\nHost: loc'
                : 'POST /ping/echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\nabc',
              () => resolve(socket),
            );
          }),
      ),
    );
    // While they hang, the instance still answers.
    await expectHealthy();
    for (const socket of sockets) socket.on('error', () => {});
    for (const socket of sockets) socket.destroy();
    await expectHealthy();
  });

  it('after all of that, the instance still serves', async () => {
    await expectHealthy();
    const reply = await anvil.request('/ping/echo', { method: 'POST', body: 'still here' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('still here');
  });
});

describe('request body limits (SPEC §10)', () => {
  it('answers 413 with JSON {error} to a body over 1 MiB declared by content-length', async () => {
    // Headers and the first part of the body; the router must answer without waiting for the rest.
    // Half a second of silence after the answer ends the exchange (the connection would otherwise
    // wait for the rest of the body until the keep-alive timeout); a second response would show.
    const reply = await exchange(
      anvil.port,
      [
        `POST /ping/echo HTTP/1.1\r\n${HOST}Content-Type: application/octet-stream\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`,
        Buffer.alloc(64 * 1024, 'a'),
      ],
      { endWhenIdleMs: 500 },
    );
    expectJsonError(reply, 413, 'ANVIL_ERR_BODY_TOO_LARGE');
    await expectHealthy();
  });

  it('answers 413 with JSON {error} to a chunked body that grows over 1 MiB', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'b');
    const chunks: Array<Buffer | string> = [`POST /ping/echo HTTP/1.1\r\n${HOST}Transfer-Encoding: chunked\r\n\r\n`];
    for (let sent = 0; sent <= 1024 * 1024; sent += chunk.length)
      chunks.push(`${chunk.length.toString(16)}\r\n`, chunk, '\r\n');
    const reply = await exchange(anvil.port, chunks, { endWhenIdleMs: 500 });
    expectJsonError(reply, 413, 'ANVIL_ERR_BODY_TOO_LARGE');
    await expectHealthy();
  });

  it('answers 413 (not a reset connection) to clients that send a whole oversize body', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        anvil
          .request('/ping/echo', { method: 'POST', body: Buffer.alloc((i % 2 === 0 ? 2 : 5) * 1024 * 1024, 'd') })
          .then(
            (r) => r.status,
            (error: Error) => error.message,
          ),
      ),
    );
    expect(statuses).toEqual(Array(20).fill(413));
    await expectHealthy();
  });

  it('accepts a body of exactly 1 MiB, and the API gets it byte for byte', async () => {
    // No two neighbouring KiB alike: chunks joined out of order or twice would show.
    const body = Buffer.from(Array.from({ length: 1024 * 1024 }, (_, i) => 97 + ((i * 7 + (i >> 10)) % 26)));
    const reply = await anvil.request('/ping/echo', { method: 'POST', body });
    expect(reply.status).toBe(200);
    expect(reply.text.length).toBe(body.length);
    expect(reply.text === body.toString('latin1')).toBe(true);
  });

  it('answers 408 to a client that does not finish its headers within --headers-timeout', async () => {
    const slow = await startInstance({ apis: { ping: { 'api.yaml': ECHO } }, args: ['--headers-timeout', '1s'] });
    try {
      // node checks header timeouts on an interval; it must be short enough for a 1 s timeout to hold
      // (the default interval, 30 s, would outlast this test's own timeout).
      const reply = await exchange(slow.port, `GET /ping/ping HTTP/1.1\r\n${HOST}X-Slow: 1\r\n`);
      expect(reply.status).toBe(408);
      await expectHealthy(slow);
    } finally {
      await slow.dispose();
    }
  }, 15_000);

  describe('with --body-limit 1KiB', () => {
    let small: TestInstance;
    beforeAll(async () => {
      small = await startInstance({ apis: { ping: { 'api.yaml': ECHO } }, args: ['--body-limit', '1KiB'] });
    });
    afterAll(async () => small?.dispose());

    it('a 2 KiB body: 413 with JSON {error}', async () => {
      const reply = await small.request('/ping/echo', { method: 'POST', body: 'x'.repeat(2048) });
      expect(reply.status).toBe(413);
      expect(reply.json()).toEqual({ error: expect.stringContaining('1024'), code: 'ANVIL_ERR_BODY_TOO_LARGE' });
      await expectHealthy(small);
    });

    it('a 512-byte body: 200, and the limit is inclusive', async () => {
      const reply = await small.request('/ping/echo', { method: 'POST', body: 'y'.repeat(512) });
      expect(reply.status).toBe(200);
      expect(reply.text).toBe('y'.repeat(512));
      expect((await small.request('/ping/echo', { method: 'POST', body: 'z'.repeat(1024) })).status).toBe(200);
      expect((await small.request('/ping/echo', { method: 'POST', body: 'z'.repeat(1025) })).status).toBe(413);
    });

    it('the body limit does not apply to deploys (they have --upload-limit)', async () => {
      // A real archive bigger than 1 KiB.
      const archive = tarGz({
        'api.yaml': 'key: big\nendpoints:\n  get /x:\n    P: { directive: Ping }\n',
        'Assets/noise.bin': randomBytes(4096),
      });
      expect(archive.length).toBeGreaterThan(1024);
      const reply = await small.admin('/anvil/api', {
        method: 'POST',
        body: archive,
        headers: { 'content-type': 'application/gzip' },
      });
      expect(reply.status).toBe(201);
    });
  });
});
