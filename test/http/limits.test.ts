import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { waitFor, waitForStarted } from '../helpers/wait-for.js';

const SLOW = `key: slow
endpoints:
  get /wait/{ms}:
    Started: { directive: Log }
    Wait: { directive: Delay, ms: $.message.pathParam.ms }
    Reply: { directive: ModifyMessage, body: { waited: $.message.pathParam.ms } }
`;

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      slow: { 'api.yaml': SLOW },
      fast: { 'api.yaml': 'key: fast\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' },
    },
    // One thread taking one request at a time, one waiting place: the third concurrent request is refused.
    args: ['--max-threads', '1', '--thread-concurrency', '1', '--mailbox', '1', '--request-timeout', '1500ms'],
  });
});
afterAll(async () => anvil?.dispose());

describe('limits of SPEC §10', () => {
  it('answers 503 with retry-after when the mailbox is full', async () => {
    await anvil.request('/slow/wait/0'); // the thread is up
    const first = anvil.request('/slow/wait/700');
    await waitForStarted(anvil, 'slow', (l) => l.path.endsWith('/wait/700'), { what: 'GET /slow/wait/700' });
    const second = anvil.request('/slow/wait/10');
    await waitFor(
      async () =>
        sample(await scrapeMetrics(anvil), 'anvil_actor_mailbox_depth', { host: 'localhost', api: 'slow' }) === 1,
      {
        what: 'GET /slow/wait/10 waiting in the mailbox (anvil_actor_mailbox_depth 1)',
      },
    );
    const third = await anvil.request('/slow/wait/10');
    expect(third.status).toBe(503);
    expect(third.headers['retry-after']).toBe('1');
    expect(third.json().error).toMatch(/Service Unavailable/);
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
  });

  it('answers 504 when the API does not answer within the request timeout; other APIs keep serving', async () => {
    // 3 s: well past the 1.5 s request timeout (the thread stays busy that long, and the drain at the end waits for it).
    const reply = await anvil.request('/slow/wait/3000');
    expect(reply.status).toBe(504);
    expect(reply.json()).toEqual({ error: 'Gateway Timeout', code: 'ANVIL_ERR_TIMEOUT' });
    expect((await anvil.request('/fast/ping')).json()).toEqual({ message: 'pong' });
  });
});
