import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';

const api = (text: string) => ({ 'api.yaml': text });

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      caller: api(`key: caller
endpoints:
  get /fetch/{id}:
    Corr: { directive: PropagateCorrelationId }
    Query: { directive: Concat, element1: "item-", element2: $.message.pathParam.id, target: item }
    Get: { directive: Pull, host: $.memory.anvil-localhost, path: /target/data, queryParams: { id: $.memory.item }, target: got }
    Reply: { directive: ModifyMessage, body: { got: $.memory.got, mine: $.memory.correlationId } }
  post /push:
    Send: { directive: Push, path: /target/inbox, body: { hello: $.message.body.hello } }
    Reply: { directive: ModifyMessage, status: 202 }
`),
      target: api(`key: target
endpoints:
  get /data:
    Corr: { directive: PropagateCorrelationId }
    Local: { directive: CheckLocalCall }
    Reply: { directive: ModifyMessage, body: { id: $.message.query.id, correlation: $.memory.correlationId, hop: $.memory.anvil-localhost } }
  post /inbox:
    Local: { directive: CheckLocalCall }
    Keep: { directive: DatabaseQuery, sql: "CREATE TABLE IF NOT EXISTS inbox (body TEXT)", mode: run }
    Store: { directive: DatabaseQuery, sql: "INSERT INTO inbox (body) VALUES (?)", params: [$.message.body], mode: run }
  get /inbox:
    Read: { directive: DatabaseQuery, sql: "SELECT body FROM inbox", target: rows }
    Reply: { directive: ModifyMessage, body: $.memory.rows }
`),
      loopa: api(
        'key: loopa\nendpoints:\n  get /x:\n    Call: { directive: Pull, host: $.memory.anvil-localhost, path: /loopb/x, target: r }\n',
      ),
      loopb: api(
        'key: loopb\nendpoints:\n  get /x:\n    Call: { directive: Pull, host: $.memory.anvil-localhost, path: /loopa/x, target: r }\n',
      ),
    },
  });
  // The target is private: reachable over the bus and through the admin host only.
  const record = (await anvil.admin('/anvil/api/target')).json();
  await anvil.admin('/anvil/api/target', {
    method: 'PUT',
    body: JSON.stringify({ active: true, release: record.release, public: false }),
  });
});
afterAll(async () => anvil?.dispose());

async function counter(name: string): Promise<number> {
  const text = (await anvil.request('/anvil/metrics', { host: 'admin.localhost' })).text;
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

describe('the in-process bus', () => {
  it('delivers a Pull to a private API of the same host, with the correlation id, opening no TCP connection', async () => {
    expect((await anvil.request('/target/data')).status).toBe(404); // private on the public host
    await anvil.request('/caller/fetch/0'); // threads started, the test's connection open
    const connectionsBefore = await counter('anvil_http_connections_total');
    const callsBefore = await counter('anvil_bus_calls_total');
    for (let i = 1; i <= 10; i++) {
      const reply = await anvil.request(`/caller/fetch/${i}`, { headers: { 'x-correlation-id': `trace-${i}` } });
      expect(reply.status).toBe(200);
      expect(reply.json()).toEqual({
        got: { id: `item-${i}`, correlation: `trace-${i}`, hop: `http://localhost:${anvil.port}` },
        mine: `trace-${i}`,
      });
    }
    // Calls that went straight to the target's thread are reported by the threads within seconds.
    await eventually(async () => (await counter('anvil_bus_calls_total')) === callsBefore + 10);
    // Ten calls between APIs, and not one connection more than the test's own.
    expect(await counter('anvil_http_connections_total')).toBe(connectionsBefore);
  });

  it('CheckLocalCall refuses a request that did not come over the bus', async () => {
    const direct = await anvil.admin('/target/data');
    expect(direct.status).toBe(401);
  });

  it('Push sends a body to another API and checks its answer', async () => {
    const reply = await anvil.request('/caller/push', {
      method: 'POST',
      body: JSON.stringify({ hello: 'world' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(202);
    expect((await anvil.admin('/target/inbox')).json()).toEqual([{ body: '{"hello":"world"}' }]);
  });

  it('stops a cycle A → B → A with 508', async () => {
    const reply = await anvil.request('/loopa/x');
    expect(reply.status).toBe(508);
    expect(reply.json()).toEqual({ error: 'Loop Detected' });
  });

  it('answers /anvil/metrics to loopback clients only (or with the token)', async () => {
    const reply = await anvil.request('/anvil/metrics', { host: 'admin.localhost' });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/plain/);
  });
});
