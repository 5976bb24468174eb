import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessApis, startInProcess } from '../helpers/in-process-apis.js';
import { eventually, type Reply } from '../helpers/instance.js';

// A JSON body nested deeper than --max-json-depth (64) is refused with 400 when the API reads it as
// JSON (an alias such as $.message.body.a, or state.message.body in a custom directive), with a log line.
// In-process (helpers/in-process-apis.ts), the instance's --max-json-depth as `maxJsonDepth`.

const API = `key: json
endpoints:
  post /field:
    Reply: { directive: ModifyMessage, body: { a: $.message.body.a } }
  post /custom:
    Echo: { directive: EchoBody }
  post /unread:
    Ping: { directive: Ping }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

const ECHO_BODY = `export default function (state) {
  state.message.body = { body: state.message.body };
}
`;

const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const objects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({ apis: { json: { 'api.yaml': API, 'Directives/EchoBody.js': ECHO_BODY } } });
});
afterAll(async () => anvil?.dispose());

function post(instance: InProcessApis, path: string, body: string): Promise<Reply> {
  return instance.request(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
}

/** The log line of the refusal of that request. */
function refusal(instance: InProcessApis, reply: Reply): Promise<Record<string, any>> {
  const id = reply.headers['x-correlation-id'];
  return eventually(() => instance.logLines().find((l) => l.msg === 'directive error' && l.requestId === id));
}

describe('JSON bodies nested too deep', () => {
  it('10 000 levels: 400 saying so, and a log line naming the entry', async () => {
    const reply = await post(anvil, '/json/field', arrays(10_000));
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: 'Bad Request: the JSON body is nested deeper than 64 levels' });
    const line = await refusal(anvil, reply);
    expect(line).toMatchObject({ api: 'json', label: 'Reply', directive: 'ModifyMessage', status: 400 });
    expect(line.message).toContain('nested deeper than 64 levels');
  });

  it('half a million levels (a 1 MB body): the same 400, and the thread keeps serving', async () => {
    const reply = await post(anvil, '/json/custom', arrays(500_000));
    expect(reply.status).toBe(400);
    expect(reply.json().error).toContain('deeper than 64 levels');
    expect((await post(anvil, '/json/field', '{"a":"still here"}')).json()).toEqual({ a: 'still here' });
  });

  it('65 levels: 400; 64 levels: accepted, arrays and objects alike', async () => {
    for (const make of [arrays, objects]) {
      const deep = await post(anvil, '/json/field', make(65));
      expect(deep.status).toBe(400);
      expect(deep.json()).toEqual({ error: 'Bad Request: the JSON body is nested deeper than 64 levels' });
      await refusal(anvil, deep);

      const limit = await post(anvil, '/json/custom', make(64));
      expect(limit.status).toBe(200);
      expect(limit.json()).toEqual({ body: JSON.parse(make(64)) });
    }
    const field = await post(anvil, '/json/field', objects(64));
    expect(field.json()).toEqual({ a: JSON.parse(objects(63)) });
  });

  it('brackets inside strings, escaped quotes included, are not nesting', async () => {
    const body = JSON.stringify({ text: '['.repeat(1000), quoted: '"{{{{"'.repeat(100), deeper: [[['\\"[']]] });
    const reply = await post(anvil, '/json/custom', body);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ body: JSON.parse(body) });
  });

  it('a custom directive reading state.message.body: 400 and a log line naming the directive', async () => {
    const reply = await post(anvil, '/json/custom', objects(100));
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: 'Bad Request: the JSON body is nested deeper than 64 levels' });
    expect(await refusal(anvil, reply)).toMatchObject({ api: 'json', directive: 'EchoBody', status: 400 });
  });

  it('an endpoint that never reads its body as JSON does not measure it', async () => {
    const reply = await post(anvil, '/json/unread', arrays(10_000));
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ message: 'pong' });
  });
});

describe('--max-json-depth', () => {
  let shallow: InProcessApis;
  beforeAll(async () => {
    shallow = await InProcessApis.start(
      { json: { 'api.yaml': API, 'Directives/EchoBody.js': ECHO_BODY } },
      { maxJsonDepth: 8 },
    );
  });
  afterAll(async () => shallow?.dispose());

  it('sets the limit: 8 levels pass, 9 are refused with the limit in the message', async () => {
    expect((await post(shallow, '/json/custom', arrays(8))).status).toBe(200);
    const reply = await post(shallow, '/json/field', arrays(9));
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: 'Bad Request: the JSON body is nested deeper than 8 levels' });
    await refusal(shallow, reply);
  });
});
