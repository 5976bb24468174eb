import { afterEach, describe, expect, it } from 'vitest';
import { backgroundLoad } from '../helpers/background-load.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';
import { apiLog, waitFor, waitForStarted } from '../helpers/wait-for.js';

const api = (version: number) => `key: slow
endpoints:
  get /wait/{ms}:
    Started: { directive: Log }
    Wait: { directive: Delay, ms: $.message.pathParam.ms }
    Reply: { directive: ModifyMessage, body: { version: ${version}, waited: $.message.pathParam.ms } }
  get /version:
    Reply: { directive: ModifyMessage, body: { version: ${version} } }
after:
  AfterWait: { directive: Delay, ms: 300, groups: [AFTER_FLOW] }
  Log: { directive: Log, groups: [AFTER_FLOW] }
`;

const running: TestInstance[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.dispose()));
});

/** Ids of the requests whose AFTER_FLOW ran to its Log (after its 300 ms Delay). */
function afterFlowIds(anvil: TestInstance): string[] {
  return apiLog(anvil, 'slow')
    .filter((l) => l.entries.includes('AfterWait (after)'))
    .map((l) => l.id);
}

/** Waits until the request to `/slow/wait/<ms>` has reached the API (its Started entry logged it). */
const inFlightIn = (anvil: TestInstance, ms: number, count = 1) =>
  waitForStarted(anvil, 'slow', (l) => l.route === 'get /wait/{ms}' && l.path.endsWith(`/wait/${ms}`), {
    what: `GET /slow/wait/${ms}`,
    count,
  });

describe('SIGTERM', () => {
  it('finishes the request in flight and its AFTER_FLOW, then exits 0', async () => {
    const anvil = await startInstance({ apis: { slow: { 'api.yaml': api(1) } } });
    running.push(anvil);
    await anvil.request('/slow/version');
    const inFlight = anvil.request('/slow/wait/800');
    await inFlightIn(anvil, 800);
    anvil.signal('SIGTERM');
    const reply = await inFlight;
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ version: 1, waited: '800' });
    expect(await anvil.waitForExit()).toBe(0);
    // AFTER_FLOW (a 300 ms Delay, then Log) ran to the end before the exit.
    expect(afterFlowIds(anvil)).toContain(reply.headers['x-correlation-id']);
    expect(anvil.logLines().some((l) => l.msg === 'stopped')).toBe(true);
  });

  it('drains the same way on Ctrl-C, which signals the whole process group, cells included', async () => {
    const anvil = await startInstance({ apis: { slow: { 'api.yaml': api(1) } }, detached: true });
    running.push(anvil);
    await anvil.request('/slow/version');
    const inFlight = anvil.request('/slow/wait/800');
    await inFlightIn(anvil, 800);
    anvil.signalGroup('SIGINT');
    const reply = await inFlight;
    expect(reply.status).toBe(200);
    expect(await anvil.waitForExit()).toBe(0);
    expect(afterFlowIds(anvil)).toContain(reply.headers['x-correlation-id']);
    // The cells waited for the router's word instead of dying of the signal.
    expect(anvil.logLines().some((l) => l.msg === 'cell died; restarting it')).toBe(false);
  });

  it('refuses new connections while draining', async () => {
    const anvil = await startInstance({ apis: { slow: { 'api.yaml': api(1) } } });
    running.push(anvil);
    await anvil.request('/slow/version');
    const inFlight = anvil.request('/slow/wait/600');
    await inFlightIn(anvil, 600);
    anvil.signal('SIGTERM');
    // The router logs 'draining' as it starts to (it closes its listening socket right after).
    await waitFor(() => anvil.logLines().some((l) => l.msg === 'draining'), {
      what: "the instance's 'draining' log line",
    });
    const fresh = await fetch(`http://127.0.0.1:${anvil.port}/slow/version`, { headers: { host: 'localhost' } }).then(
      (r) => r.status,
      () => 'refused',
    );
    expect(fresh).toBe('refused');
    expect((await inFlight).status).toBe(200);
    expect(await anvil.waitForExit()).toBe(0);
  });
});

describe('a release switch', () => {
  it('drops no request: the old release finishes what it has, the new one takes new requests', async () => {
    const anvil = await startInstance({ apis: { slow: { 'api.yaml': api(1) } } });
    running.push(anvil);
    expect((await anvil.request('/slow/version')).json()).toEqual({ version: 1 });

    // Slow requests in flight on release 1 while release 2 is deployed.
    const slowOnes = Array.from({ length: 10 }, () => anvil.request('/slow/wait/700'));
    const load = backgroundLoad(anvil, '/slow/version', 6);
    await inFlightIn(anvil, 700, 10);
    await waitFor(() => load.replies.length > 0, { what: 'a first reply to the background load (from release 1)' });
    const deployed = await anvil.admin('/anvil/api', {
      method: 'POST',
      body: tarGz({ 'api.yaml': api(2) }),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(deployed.status).toBe(201);
    const afterSwitch = await anvil.request('/slow/version');
    expect(afterSwitch.json()).toEqual({ version: 2 });

    const slow = await Promise.all(slowOnes);
    expect(slow.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(slow.every((r) => r.json().version === 1)).toBe(true);
    await load.stop();
    expect(load.statuses().every((s) => s === 200)).toBe(true);
    expect([...new Set(load.replies.map((r) => r.json().version))].sort()).toEqual([1, 2]);
  });
});
