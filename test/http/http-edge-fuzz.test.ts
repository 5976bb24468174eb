import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUZZ_TEST_TIMEOUT_MS, fuzzParameters } from '../helpers/fuzz-budget.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { exchange, type RawReply } from '../helpers/raw-http.js';

// The HTTP edge on random requests over a raw socket: random request lines, header sets (names and
// values of random bytes, repeated headers, values near the 16 KiB header limit, random
// content-length / transfer-encoding combinations) and bodies. Whatever comes in, the router answers
// below 500 or closes the connection, and stays up: a normal request answers 200 after each one.

const API = `key: edge
endpoints:
  get /ping:
    Ping: { directive: Ping }
  post /echo:
    Reply: { directive: ModifyMessage, body: $.message.body }
  get /headers:
    Reply: { directive: ModifyMessage, body: { a: $.message.header.x-a, proto: $.message.header.__proto__, ctor: $.message.header.constructor, q: $.message.query.constructor } }
`;

let anvil: TestInstance;
beforeAll(async () => {
  anvil = await startInstance({ apis: { edge: { 'api.yaml': API } } });
});
afterAll(async () => anvil?.dispose());

const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((b) => Buffer.from(b).toString('latin1'));
const token = fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,12}$/);

// A request is a well-formed one with 0 to 3 damages, each to one of its parts: about a third
// reach the API untouched, the others probe the parser, the front door and the framing.
const oddMethod = fc.oneof(fc.constantFrom('PATCH', 'CONNECT', 'TRACE', 'get', 'PRI', 'M-SEARCH'), token, bytes(8));
const oddTarget = fc.oneof(
  fc.constantFrom(
    '/edge/../edge/ping',
    '//edge/ping',
    '/edge/%2e%2e/ping',
    '/edge/%zz',
    '/edge/\u00e9',
    '*',
    'edge/ping',
    'http://localhost/edge/ping',
    '/',
    '/anvil/health',
    '/edge/ping?a=%00&b',
    '/other/ping',
  ),
  bytes(40).map((b) => `/edge/${b}`),
  bytes(20),
);
const oddVersion = fc.constantFrom(
  'HTTP/2.0',
  'HTTP/1.2',
  'HTTP/01.1',
  'http/1.1',
  '',
  'HTTP/1.1 extra',
  'HTTP/1.1\u0000',
);
const oddHeaderName = fc.oneof(
  fc.constantFrom(
    'Content-Length',
    'Transfer-Encoding',
    'Connection',
    'Expect',
    'Upgrade',
    'Trailer',
    'TE',
    'Host',
    'public-host',
    'public-host-key',
    '',
  ),
  bytes(10),
);
const oddHeaderValue = fc.oneof(
  fc.constantFrom(
    '0',
    '5',
    '-1',
    '1e3',
    '0x10',
    ' 7',
    '99999999999999999999',
    'chunked',
    'Chunked',
    'gzip, chunked',
    'chunked, identity',
    'identity',
    ' chunked',
    '100-continue',
    'close',
    'keep-alive',
    'websocket',
    'h2c',
    'admin.localhost',
    '',
  ),
  bytes(30),
  fc.constantFrom(8_000, 16_000, 16_300, 17_000).map((n) => 'v'.repeat(n)),
);
type Damage =
  | { part: 'method' | 'target' | 'version' | 'lineEnd' | 'framing'; value: string }
  | { part: 'header'; name: string; value: string; repeat: boolean }
  | { part: 'noHost' | 'hugeBody' };
const damage: fc.Arbitrary<Damage> = fc.oneof(
  oddMethod.map((value) => ({ part: 'method' as const, value })),
  oddTarget.map((value) => ({ part: 'target' as const, value })),
  oddVersion.map((value) => ({ part: 'version' as const, value })),
  fc.constantFrom('\n', '\r', '\n\r').map((value) => ({ part: 'lineEnd' as const, value })),
  fc
    .constantFrom('both', 'short', 'long', 'bad-chunks', 'two-lengths')
    .map((value) => ({ part: 'framing' as const, value })),
  fc
    .record({ name: oddHeaderName, value: oddHeaderValue, repeat: fc.boolean() })
    .map((h) => ({ part: 'header' as const, ...h })),
  fc.constantFrom({ part: 'noHost' as const }, { part: 'hugeBody' as const }),
);

const sane = fc.record({
  route: fc.constantFrom(
    ['GET', '/edge/ping'],
    ['HEAD', '/edge/ping'],
    ['POST', '/edge/echo'],
    ['GET', '/edge/headers?constructor=1'],
    ['OPTIONS', '/edge/echo'],
    ['GET', '/edge/nothing'],
    ['DELETE', '/edge/ping'],
  ),
  version: fc.constantFrom('HTTP/1.1', 'HTTP/1.0'),
  headers: fc.array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(
          'Content-Type',
          'Accept',
          'X-A',
          'constructor',
          '__proto__',
          'toString',
          'api-key',
          'User-Agent',
        ),
        token,
      ),
      fc.stringMatching(/^[!-~]{0,20}$/),
    ),
    { maxLength: 4 },
  ),
  framing: fc.constantFrom('none', 'length', 'chunked'),
  body: bytes(200),
  close: fc.constant(true),
});

interface Request {
  method: string;
  target: string;
  version: string;
  lineEnd: string;
  framing: string;
  headers: Array<[string, string]>;
  body: string;
  close: boolean;
  damages: Damage[];
}

const damages = fc.oneof(
  { arbitrary: fc.constant([] as Damage[]), weight: 1 },
  { arbitrary: fc.array(damage, { minLength: 1, maxLength: 3 }), weight: 2 },
);
const request = fc.tuple(sane, damages).map(([r, damages]): Request => {
  const [method, target] = r.route as [string, string];
  const out: Request = {
    method,
    target,
    version: r.version,
    framing: r.framing,
    body: r.body,
    close: r.close,
    headers: [['Host', 'localhost'], ...r.headers],
    lineEnd: '\r\n',
    damages,
  };
  for (const d of damages) {
    if (d.part === 'header')
      out.headers.push([d.name, d.value], ...(d.repeat ? [[d.name, d.value] as [string, string]] : []));
    else if (d.part === 'noHost') out.headers = out.headers.filter(([n]) => n !== 'Host');
    else if (d.part === 'hugeBody') out.body = 'x'.repeat(1024 * 1024 + 1);
    else if (
      d.part === 'method' ||
      d.part === 'target' ||
      d.part === 'version' ||
      d.part === 'lineEnd' ||
      d.part === 'framing'
    )
      out[d.part] = d.value;
  }
  return out;
});

const chunked = (data: string) => (data === '' ? '0\r\n\r\n' : `${data.length.toString(16)}\r\n${data}\r\n0\r\n\r\n`);

function wire(r: Request): Buffer {
  const length = Buffer.byteLength(r.body, 'latin1');
  const framed: Record<string, [string[], string]> = {
    none: [[], ''],
    length: [[`Content-Length: ${length}`], r.body],
    chunked: [['Transfer-Encoding: chunked'], chunked(r.body)],
    both: [[`Content-Length: ${length}`, 'Transfer-Encoding: chunked'], chunked(r.body)],
    short: [[`Content-Length: ${length + 10}`], r.body],
    long: [[`Content-Length: ${Math.max(0, length - 3)}`], r.body],
    'bad-chunks': [['Transfer-Encoding: chunked'], `zz\r\n${r.body}\r\n0\r\n\r\n`],
    'two-lengths': [[`Content-Length: ${length}`, `Content-Length: ${length + 1}`], r.body],
  };
  const [frameHeaders, payload] = framed[r.framing]!;
  const head = [
    `${r.method} ${r.target} ${r.version}`,
    ...r.headers.map(([n, v]) => `${n}: ${v}`),
    ...frameHeaders,
    ...(r.close ? ['Connection: close'] : []),
  ];
  return Buffer.from(`${head.join(r.lineEnd)}${r.lineEnd}${r.lineEnd}${payload}`, 'latin1');
}

function statuses(reply: RawReply): number[] {
  return reply.statusLines.map((line) => Number(line.slice(9, 12)));
}

async function expectServing(): Promise<void> {
  expect(anvil.child.exitCode).toBeNull();
  expect(anvil.child.signalCode).toBeNull();
  const reply = await anvil.request('/edge/ping');
  expect(reply.status).toBe(200);
}

describe('the HTTP edge on random requests', () => {
  it(
    'never answers 5xx, never falls over',
    async () => {
      const seen = { answered: 0, refused: 0, closed: 0 };
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const reply = await exchange(anvil.port, wire(r), { endWhenIdleMs: 500 });
          for (const status of statuses(reply)) expect(status, reply.raw.slice(0, 300)).toBeLessThan(500);
          const first = statuses(reply).find((s) => s >= 200);
          seen[first === undefined ? 'closed' : first < 400 ? 'answered' : 'refused'] += 1;
          await expectServing();
        }),
        fuzzParameters(1000),
      );
      await expectServing();
      console.log('http edge fuzz outcomes', seen);
      // The generator reaches the API as well as the parser's refusals.
      expect(seen.answered).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    },
    FUZZ_TEST_TIMEOUT_MS,
  );

  it(
    'well-formed requests with random header names and values get 200, the header names read as names',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.tuple(
              fc.constantFrom('X-A', 'constructor', '__proto__', 'toString', 'x-a'),
              fc.stringMatching(/^[!-~]{1,12}$/),
            ),
            { maxLength: 4 },
          ),
          async (list) => {
            const head = list.map(([n, v]) => `${n}: ${v}\r\n`).join('');
            const reply = await exchange(
              anvil.port,
              `GET /edge/headers HTTP/1.1\r\nHost: localhost\r\n${head}Connection: close\r\n\r\n`,
            );
            expect(reply.status, reply.raw).toBe(200);
            const values = (name: string) => list.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
            const joined = (name: string) => (values(name).length === 0 ? null : values(name).join(', '));
            expect(JSON.parse(reply.body)).toEqual({
              a: joined('x-a'),
              proto: joined('__proto__'),
              ctor: joined('constructor'),
              q: null,
            });
          },
        ),
        fuzzParameters(60),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
