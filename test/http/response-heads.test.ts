import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { quotaRefusals } from '../helpers/metrics.js';
import { exchange } from '../helpers/raw-http.js';
import { slowReader, type SlowReader } from '../helpers/slow-reader.js';

// Issue 41, cases 1 and 8: the head of an API's response. The router holds a response's head for
// a client that does not read it, so its size is bounded per response (--max-response-headers,
// 100 lines; --max-response-header-bytes, 64 KiB): an API that makes a larger head gets a 500
// naming the limit, counted for it, and the router never sees the head. An informational status
// (1xx) is not a final answer: sent as one, a keep-alive client mis-frames what follows, so it is
// refused the same way (500, logged with the status).

const MiB = 1024 * 1024;
/** What 40 clients asking for a 10 MiB header and never reading may add to the router's RSS (issue 41: it was 1.3 GB). */
const RSS_GROWTH_BOUND_MB = 256;

const API = `key: heads
limits: { memoryMb: 128, cpuMs: 10000 }
endpoints:
  get /big-header:
    Make: { directive: BigHeader }
  get /many-headers:
    Make: { directive: ManyHeaders }
  get /cookies/{n}:
    Make: { directive: Cookies, n: $.message.pathParam.n }
  get /status/{n}:
    Make: { directive: SetStatus, n: $.message.pathParam.n }
  get /modify-103:
    Reply: { directive: ModifyMessage, status: 103, body: "x" }
  get /ping:
    Ping: { directive: Ping }
`;

const DIRECTIVES = {
  'Directives/BigHeader.js': `export default (state) => { state.message.headers = { 'x-big': 'x'.repeat(${10 * MiB}) }; state.message.body = 'ok'; };\n`,
  'Directives/ManyHeaders.js': `export default (state) => {
  const headers = {};
  for (let i = 0; i < 100000; i++) headers['x-h' + i] = '1';
  state.message.headers = headers;
  state.message.body = 'ok';
};
`,
  'Directives/Cookies.js': `export default (state, config) => {
  state.message.headers = { 'set-cookie': Array.from({ length: Number(config.n) }, (_, i) => 'c' + i + '=1') };
  state.message.body = 'ok';
};
`,
  'Directives/SetStatus.js': `export default (state, config) => { state.message.status = Number(config.n); state.message.body = 'x'; };\n`,
};

let anvil: TestInstance;

function routerRssMb(): number {
  const status = readFileSync(`/proc/${anvil.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

beforeAll(async () => {
  // The directives build 100 000 headers or a 10 MiB string: on a loaded machine the isolate's clock
  // (which counts waiting for a core) passes the default 1 s ceiling of cpuMs.
  anvil = await startInstance({
    apis: { heads: { 'api.yaml': API, ...DIRECTIVES } },
    args: ['--max-directive-cpu', '10s'],
  });
});
afterAll(async () => anvil?.dispose());

describe('the size of a response head (--max-response-header-bytes, --max-response-headers)', () => {
  it("40 clients that never read a 10 MiB header: each gets a 500 naming the limit, counted for the API; the router's memory stays bounded", async () => {
    expect((await anvil.request('/heads/ping')).status).toBe(200);
    const before = routerRssMb();
    const readers: SlowReader[] = Array.from({ length: 40 }, () => slowReader(anvil.port, '/heads/big-header'));
    try {
      await Promise.all(readers.map((r) => r.headed));
      await eventually(async () => (await quotaRefusals(anvil, 'heads', 'response_header_bytes')) === 40, 60_000);
      const grown = routerRssMb() - before;
      expect(grown, `the router's RSS grew by ${grown.toFixed(1)} MB`).toBeLessThan(RSS_GROWTH_BOUND_MB);
      const first = await readers[0]!.readRest();
      expect(first.status).toBe(500);
      expect(JSON.parse(first.body.toString())).toEqual({
        error: expect.stringMatching(
          /^the response's header lines take \d+ bytes, over the limit of 65536 bytes per response \(--max-response-header-bytes\)$/,
        ),
      });
      expect(first.body.toString()).not.toContain('xxxx');
    } finally {
      for (const r of readers) r.destroy();
    }
    // The threads' log lines reach the instance log after the answers: wait for the last of them.
    const logged = () =>
      anvil
        .logLines()
        .filter(
          (l) =>
            l.msg === 'directive error' &&
            l.api === 'heads' &&
            String(l.message).includes('ANVIL_ERR_QUOTA_RESPONSE_HEADER_BYTES'),
        ).length;
    await eventually(async () => logged() >= 40, 20_000);
    expect(logged()).toBe(40);
  }, 90_000);

  it('100 000 headers, or 100 000 set-cookie values: a 500 naming the limit of 100 header lines', async () => {
    for (const path of ['/heads/many-headers', '/heads/cookies/100000']) {
      const reply = await anvil.request(path);
      expect(reply.status, path).toBe(500);
      expect(reply.headers['set-cookie']).toBeUndefined();
      expect(reply.json()).toEqual({
        error: expect.stringMatching(
          /^the response has \d+ header lines, over the limit of 100 per response \(--max-response-headers; each set-cookie value is one\)$/,
        ),
      });
    }
    await eventually(async () => (await quotaRefusals(anvil, 'heads', 'response_headers')) === 2);
  });

  it('a head within the limits is sent as it is: 50 set-cookie values', async () => {
    const reply = await anvil.request('/heads/cookies/50');
    expect(reply.status).toBe(200);
    expect(reply.headers['set-cookie']).toHaveLength(50);
  });
});

describe('an informational status (1xx) as the final answer', () => {
  it('is refused with a 500 and logged with the status; on a keep-alive connection the next answer is framed right', async () => {
    for (const [path, status] of [
      ['/heads/status/101', 101],
      ['/heads/modify-103', 103],
    ] as const) {
      // Both requests on one connection: the second answer must start where the first one ends.
      const reply = await exchange(
        anvil.port,
        `GET ${path} HTTP/1.1\r\nhost: localhost\r\n\r\nGET /heads/ping HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n`,
      );
      const answers = parseAnswers(reply.raw);
      expect(
        answers.map((a) => a.status),
        path,
      ).toEqual([500, 200]);
      expect(JSON.parse(answers[0]!.body)).toEqual({ error: 'Internal Server Error' });
      expect(JSON.parse(answers[1]!.body)).toEqual({ message: 'pong' });
      const logged = await eventually(() =>
        anvil
          .logLines()
          .find(
            (l) =>
              l.msg === 'directive error' &&
              String(l.message).includes(`ANVIL_ERR_INFORMATIONAL_STATUS: the response status is ${status}`),
          ),
      );
      expect(logged).toMatchObject({ api: 'heads', status: 500 });
    }
  });

  it('a status a directive sets from 200 to 599 is sent as it is', async () => {
    expect((await anvil.request('/heads/status/299')).status).toBe(299);
  });
});

/** The answers in `raw`, one after the other, each framed by its content-length as a client would. */
function parseAnswers(raw: string): Array<{ status: number; body: string }> {
  const answers: Array<{ status: number; body: string }> = [];
  let at = 0;
  while (at < raw.length) {
    const headEnd = raw.indexOf('\r\n\r\n', at);
    if (headEnd < 0) throw new Error(`an unframed rest: ${JSON.stringify(raw.slice(at, at + 80))}`);
    const head = raw.slice(at, headEnd);
    const status = /^HTTP\/1\.1 (\d{3})/.exec(head);
    if (status === null) throw new Error(`not a status line: ${JSON.stringify(head.slice(0, 80))}`);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
    answers.push({ status: Number(status[1]), body: raw.slice(headEnd + 4, headEnd + 4 + length) });
    at = headEnd + 4 + length;
  }
  return answers;
}
