import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellOf, cellPid, keysPerCell, statField } from '../helpers/cells.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';
import { waitFor, waitForStarted } from '../helpers/wait-for.js';

// Bus calls between two APIs go straight from the caller's thread to a thread of the target once
// the router has routed one and offered that thread (no router on the way). These tests check that
// the shortcut is taken and that it changes nothing a user can see: answers, hops, metrics, and
// what happens when the target gets a new release, is disabled, or dies.

const target = (says: string) => `key: target
endpoints:
  get /data:
    Corr: { directive: PropagateCorrelationId }
    Local: { directive: CheckLocalCall }
    Reply: { directive: ModifyMessage, body: { says: ${says}, id: $.message.query.id, correlation: $.memory.correlationId } }
  get /slow:
    Started: { directive: Log }
    Wait: { directive: Delay, ms: 1500 }
    Reply: { directive: ModifyMessage, body: { says: slow } }
`;

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    env: { ANVIL_LOG_LEVEL: 'debug' },
    apis: {
      caller: {
        'api.yaml': `key: caller
endpoints:
  get /fetch/{id}:
    Corr: { directive: PropagateCorrelationId }
    Get: { directive: Pull, host: $.memory.anvil-localhost, path: /target/data, queryParams: { id: $.message.pathParam.id }, target: got, verify: false }
    Reply: { directive: ModifyMessage, body: $.memory.got }
  get /slow:
    Get: { directive: Pull, host: $.memory.anvil-localhost, path: /target/slow, target: got }
    Reply: { directive: ModifyMessage, body: $.memory.got }
`,
      },
      target: { 'api.yaml': target('first') },
    },
  });
});
afterAll(async () => anvil?.dispose());

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = (await anvil.request('/anvil/metrics', { host: 'admin.localhost' })).text;
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && want.every((w) => line.includes(w)))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/** Requests to `target` the router itself routed (its debug log has one line per request). */
function routedToTarget(): number {
  return anvil.logLines().filter((l) => l.msg === 'request' && l.api === 'target').length;
}

/** CPU time (user + system) of process `pid`, all its threads, in ms (USER_HZ is 100 on Linux). */
const cpuMs = (pid: number) => (statField(pid, 14) + statField(pid, 15)) * 10;

/** Waits until process `pid` has used no CPU for `quietMs` (the work its last requests set off is done). */
async function cpuQuiet(pid: number, quietMs = 100): Promise<void> {
  let last = cpuMs(pid);
  let since = Date.now();
  await waitFor(
    () => {
      const now = cpuMs(pid);
      if (now !== last) [last, since] = [now, Date.now()];
      return Date.now() - since >= quietMs;
    },
    { what: `process ${pid} to use no CPU for ${quietMs} ms` },
  );
}

async function fetchMany(from: number, count: number, says: string): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const reply = await anvil.request(`/caller/fetch/${i}`, { headers: { 'x-correlation-id': `trace-${i}` } });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ says, id: String(i), correlation: `trace-${i}` });
  }
}

describe('bus calls straight between actor threads', () => {
  it('skips the router after the first calls, with the same answers, and still counts every call in the metrics', async () => {
    const requestsBefore = await metric('anvil_requests_total', { api: 'target', route: 'get /data' });
    const callsBefore = await metric('anvil_bus_calls_total', { api: 'caller' });
    const routedBefore = routedToTarget();
    await fetchMany(1, 40, 'first');
    // The router saw the first call or two (it then offered the target's thread); not the rest.
    expect(routedToTarget() - routedBefore).toBeLessThan(10);
    // Threads report what went past the router within a few seconds.
    await eventually(
      async () => (await metric('anvil_requests_total', { api: 'target', route: 'get /data' })) === requestsBefore + 40,
    );
    await eventually(async () => (await metric('anvil_bus_calls_total', { api: 'caller' })) === callsBefore + 40);
  });

  it('reaches a new release of the target as soon as it is switched to', async () => {
    await fetchMany(100, 5, 'first');
    const deployed = await anvil.admin('/anvil/api', {
      method: 'POST',
      body: tarGz({ 'api.yaml': target('second') }),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(deployed.status).toBe(201);
    const { release } = deployed.json() as { release: string };
    const switched = await anvil.admin('/anvil/api/target', {
      method: 'PUT',
      body: JSON.stringify({ active: true, release, public: false }),
    });
    expect(switched.status).toBe(204);
    // The old release's thread stops taking direct calls when the router switches: the next call answers from the new one.
    const reply = await anvil.request('/caller/fetch/200');
    expect(reply.json()).toMatchObject({ says: 'second' });
    await fetchMany(201, 10, 'second');
  });

  it('answers 404 once the target is disabled, and reaches it again once it is enabled', async () => {
    await fetchMany(300, 5, 'second');
    const record = (await anvil.admin('/anvil/api/target')).json() as { release: string };
    await anvil.admin('/anvil/api/target', {
      method: 'PUT',
      body: JSON.stringify({ active: false, release: record.release, public: false }),
    });
    const disabled = await anvil.request('/caller/fetch/301');
    expect(disabled.json()).toEqual({ error: 'Not Found', code: 'ANVIL_ERR_NOT_FOUND' });
    await anvil.admin('/anvil/api/target', {
      method: 'PUT',
      body: JSON.stringify({ active: true, release: record.release, public: false }),
    });
    await fetchMany(302, 10, 'second');
  });

  it('answers a call in flight when the target thread retires under it', async () => {
    await fetchMany(400, 3, 'second');
    const slow = anvil.request('/caller/slow');
    // Once the slow call has reached the target, the router retires the target's threads.
    await waitForStarted(anvil, 'target', (l) => l.route === 'get /slow', { what: 'the call to /target/slow' });
    const record = (await anvil.admin('/anvil/api/target')).json() as { release: string };
    await anvil.admin('/anvil/api/target', {
      method: 'PUT',
      body: JSON.stringify({ active: false, release: record.release, public: false }),
    });
    const reply = await slow;
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ says: 'slow' });
    await anvil.admin('/anvil/api/target', {
      method: 'PUT',
      body: JSON.stringify({ active: true, release: record.release, public: false }),
    });
    await fetchMany(403, 3, 'second');
  });
});

describe('a direct bus call whose target dies', () => {
  const [callerKey, targetKey] = keysPerCell('peer', 2) as [string, string];
  let two: TestInstance;

  beforeAll(async () => {
    two = await startInstance({
      args: ['--cells', '2'],
      apis: {
        [callerKey]: {
          'api.yaml': `key: ${callerKey}
endpoints:
  get /wait/{ms}:
    Path: { directive: Concat, element1: /${targetKey}/wait/, element2: $.message.pathParam.ms, target: path }
    Get: { directive: Pull, host: $.memory.anvil-localhost, path: $.memory.path, target: got, verify: false }
    Reply: { directive: ModifyMessage, body: $.memory.got }
`,
        },
        [targetKey]: {
          'api.yaml': `key: ${targetKey}
endpoints:
  get /wait/{ms}:
    Started: { directive: Log }
    Wait: { directive: Delay, ms: $.message.pathParam.ms }
    Reply: { directive: ModifyMessage, body: { waited: $.message.pathParam.ms } }
`,
        },
      },
    });
  });
  afterAll(async () => two?.dispose());

  it('lets the caller sleep while it waits for a slow target (it stays awake only briefly after sending)', async () => {
    for (let i = 0; i < 10; i++) expect((await two.request(`/${callerKey}/wait/0`)).json()).toEqual({ waited: '0' });
    const callerCell = cellPid(two.pid, cellOf(callerKey, 2));
    // The first calls leave the cell some work for a few hundred ms (its threads warming up); it is not the waiting measured here.
    await cpuQuiet(callerCell);
    const inFlight = two.request(`/${callerKey}/wait/1500`);
    await waitForStarted(two, targetKey, (l) => l.path.endsWith('/wait/1500'), {
      what: `the call to /${targetKey}/wait/1500`,
    });
    const before = cpuMs(callerCell);
    // A real-time window: the caller's CPU is measured over one second of its waiting.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // A thread that kept polling for the answer would use about 1000 ms of CPU here.
    expect(cpuMs(callerCell) - before).toBeLessThan(150);
    expect((await inFlight).json()).toEqual({ waited: '1500' });
  });

  it('answers 502 like the router would, and the next calls reach the restarted target', async () => {
    expect(cellOf(callerKey, 2)).not.toBe(cellOf(targetKey, 2));
    for (let i = 0; i < 10; i++) expect((await two.request(`/${callerKey}/wait/0`)).json()).toEqual({ waited: '0' });
    const inFlight = two.request(`/${callerKey}/wait/5000`);
    await waitForStarted(two, targetKey, (l) => l.path.endsWith('/wait/5000'), {
      what: `the call to /${targetKey}/wait/5000`,
    });
    process.kill(cellPid(two.pid, cellOf(targetKey, 2)), 'SIGKILL');
    const failed = await inFlight;
    expect(failed.status).toBe(200);
    expect(failed.json()).toEqual({
      error: 'Bad Gateway: the API stopped while handling the request',
      code: 'ANVIL_ERR_CELL_DIED',
    });
    // The caller's cell lived on; the target's cell restarts and takes calls again.
    await eventually(async () => (await two.request(`/${callerKey}/wait/0`)).json().waited === '0');
  });
});
