import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { waitFor } from '../helpers/wait-for.js';

// Small directives of the original's catalogue (ORIGINAL.md): StringToFriendlyUrl, IdResponse,
// ResultResponse, CheckStatus after Http, CalculateIp and AnonymizeIp, in-process
// (helpers/in-process-apis.ts). The address CalculateIp takes from a trusted proxy's x-forwarded-for,
// which the router reads, is test/http/behind-a-balancer.test.ts's.

const API = (upstream: number) => `key: small
endpoints:
  get /slug:
    Slug: { directive: StringToFriendlyUrl, string: $.message.query.title, target: slug }
    Reply: { directive: ResultResponse, result: $.memory.slug }
  post /things/{id}:
    Created: { directive: IdResponse, id: $.message.pathParam.id }
  get /result:
    Reply: { directive: ResultResponse, result: { list: [1, two], none: null } }
  get /status/{n}:
    Forward: { directive: Http, host: "http://127.0.0.1:${upstream}" }
    Check: { directive: CheckStatus }
  get /missing:
    Forward: { directive: Http, host: "http://127.0.0.1:${upstream}" }
    Check: { directive: CheckStatus, status: 404, message: No such thing upstream }
  get /teapot:
    Set: { directive: ModifyMessage, status: 418, body: I am a teapot }
    Check: { directive: CheckStatus, status: 503, message: Kettle trouble }
  get /ip:
    Ip: { directive: CalculateIp }
    Mask: { directive: AnonymizeIp, ip: $.memory.ip, target: masked }
    Reply: { directive: ModifyMessage, body: { ip: $.memory.ip, masked: $.memory.masked } }
  get /mask:
    Mask: { directive: AnonymizeIp, ip: $.message.query.ip, target: masked }
    Reply: { directive: ResultResponse, result: $.memory.masked }
  get /via-bus:
    Call: { directive: Pull, host: $.memory.anvil-localhost, path: /small/ip, headers: { x-forwarded-for: 203.0.113.66 }, target: got }
    Reply: { directive: ResultResponse, result: $.memory.got }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

let anvil: InProcessApis;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
  anvil = await startInProcess({
    apis: { small: { 'api.yaml': API(upstream.port) } },
    env: { ANVIL_EGRESS_ALLOW: '127.0.0.1' },
  });
});
afterAll(async () => {
  await anvil?.dispose();
  await upstream?.close();
});

const get = (path: string) => anvil.request(`/small${path}`);

describe('StringToFriendlyUrl', () => {
  it('makes a slug without entity leftovers or edge dashes', async () => {
    const slug = async (title: string) => (await get(`/slug?title=${encodeURIComponent(title)}`)).json().result;
    expect(await slug('Crème Brûlée & Co’s "Best" <Recipes>!')).toBe('creme-brulee-and-cos-best-recipes');
    expect(await slug('  Straße in Łódź  ')).toBe('strasze-in-lodz');
    expect(await slug('Hi!')).toBe('hi');
  });
});

describe('IdResponse and ResultResponse', () => {
  it('IdResponse answers 201 {"id": …} as JSON', async () => {
    const reply = await anvil.request('/small/things/a-42', { method: 'POST' });
    expect(reply.status).toBe(201);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(reply.json()).toEqual({ id: 'a-42' });
  });

  it('ResultResponse answers 200 {"result": …} as JSON', async () => {
    const reply = await get('/result');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(reply.json()).toEqual({ result: { list: [1, 'two'], none: null } });
  });
});

describe('CheckStatus', () => {
  it('lets an answer under 400 through', async () => {
    const reply = await get('/status/201');
    expect([reply.status, reply.json()]).toEqual([201, { status: 201 }]);
  });

  it('fails an upstream answer of 400 or more with 502 "Server Side Error", logging the status and body', async () => {
    const reply = await get('/status/503');
    expect(reply.status).toBe(502);
    expect(reply.json()).toEqual({ error: 'Bad Gateway' }); // a 5xx message is generic without debug
    await waitFor(
      () =>
        anvil
          .logLines()
          .find(
            (l) =>
              l.api === 'small' && l.msg === 'CheckStatus: the message has status 503' && l.body === '{"status":503}',
          ),
      { what: 'the CheckStatus log line' },
    );
    await waitFor(
      () =>
        anvil
          .logLines()
          .find((l) => l.api === 'small' && l.directive === 'CheckStatus' && l.message === 'Server Side Error'),
      { what: 'the error with its real message in the log' },
    );
  });

  it('uses the status and message it is given', async () => {
    const missing = await get('/missing');
    expect([missing.status, missing.json()]).toEqual([404, { error: 'No such thing upstream' }]);
    const teapot = await get('/teapot');
    expect(teapot.status).toBe(503);
  });
});

describe('CalculateIp and AnonymizeIp', () => {
  it('CalculateIp gives 127.0.0.1 to a call over the bus, whatever x-forwarded-for the caller sends', async () => {
    const reply = await get('/via-bus');
    expect(reply.json()).toEqual({ result: { ip: '127.0.0.1', masked: '127.0.0.0' } });
  });

  it('AnonymizeIp masks IPv4 and IPv6 addresses and gives null for anything else', async () => {
    const mask = async (ip: string) => (await get(`/mask?ip=${encodeURIComponent(ip)}`)).json().result;
    expect(await mask('198.51.100.77')).toBe('198.51.100.0');
    expect(await mask('2001:db8:85a3:8d3:1319:8a2e:370:7348')).toBe('2001:db8:85a3::');
    expect(await mask('::ffff:198.51.100.77')).toBe('198.51.100.0');
    expect(await mask('not an address')).toBeNull();
    expect((await get('/mask')).json()).toEqual({ result: null });
  });
});
