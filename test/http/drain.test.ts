import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backgroundLoad } from '../helpers/background-load.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';

const api = (version: number) => `key: slow
endpoints:
  get /wait/{ms}:
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

function logIds(anvil: TestInstance): string[] {
  const dir = join(anvil.dataDir, 'localhost', 'dev', 'slow', 'logs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).id));
}

describe('SIGTERM', () => {
  it('finishes the request in flight and its AFTER_FLOW, then exits 0', async () => {
    const anvil = await startInstance({ apis: { slow: { 'api.yaml': api(1) } } });
    running.push(anvil);
    await anvil.request('/slow/version');
    const inFlight = anvil.request('/slow/wait/800');
    await new Promise((r) => setTimeout(r, 200));
    anvil.signal('SIGTERM');
    const reply = await inFlight;
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ version: 1, waited: '800' });
    expect(await anvil.waitForExit()).toBe(0);
    // AFTER_FLOW (a 300 ms Delay, then Log) ran to the end before the exit.
    expect(logIds(anvil)).toContain(reply.headers['x-correlation-id']);
    expect(anvil.logLines().some((l) => l.msg === 'stopped')).toBe(true);
  });

  it('drains the same way on Ctrl-C, which signals the whole process group, cells included', async () => {
    const anvil = await startInstance({ apis: { slow: { 'api.yaml': api(1) } }, detached: true });
    running.push(anvil);
    await anvil.request('/slow/version');
    const inFlight = anvil.request('/slow/wait/800');
    await new Promise((r) => setTimeout(r, 200));
    anvil.signalGroup('SIGINT');
    const reply = await inFlight;
    expect(reply.status).toBe(200);
    expect(await anvil.waitForExit()).toBe(0);
    expect(logIds(anvil)).toContain(reply.headers['x-correlation-id']);
    // The cells waited for the router's word instead of dying of the signal.
    expect(anvil.logLines().some((l) => l.msg === 'cell died; restarting it')).toBe(false);
  });

  it('refuses new connections while draining', async () => {
    const anvil = await startInstance({ apis: { slow: { 'api.yaml': api(1) } } });
    running.push(anvil);
    await anvil.request('/slow/version');
    const inFlight = anvil.request('/slow/wait/600');
    await new Promise((r) => setTimeout(r, 150));
    anvil.signal('SIGTERM');
    await new Promise((r) => setTimeout(r, 150));
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
    await new Promise((r) => setTimeout(r, 100));
    const deployed = await anvil.admin('/anvil/api', { method: 'POST', body: tarGz({ 'api.yaml': api(2) }), headers: { 'content-type': 'application/gzip' } });
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
