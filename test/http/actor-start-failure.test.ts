import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      broken: { 'api.yaml': 'key: broken\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' },
      fine: { 'api.yaml': 'key: fine\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' },
    },
  });
});
afterAll(async () => anvil?.dispose());

describe('an API whose release cannot load', () => {
  it('answers 502 instead of hanging, is logged, and leaves other APIs alone', async () => {
    // Fault injection: damage the stored release before its first request starts a thread.
    const releases = join(anvil.dataDir, '.anvil', 'releases', 'localhost', 'broken');
    const [release] = readdirSync(releases);
    writeFileSync(join(releases, release!, 'compiled.json'), '{ not json');

    const reply = await anvil.request('/broken/ping');
    expect(reply.status).toBe(502);
    expect(reply.json()).toEqual({ error: 'Bad Gateway: the API could not start', code: 'ANVIL_ERR_ACTOR_FAILED' });
    await eventually(() =>
      anvil.logLines().some((l) => l.msg === 'actor thread failed to start' && String(l.actor).includes('/broken@')),
    );
    expect((await anvil.request('/fine/ping')).json()).toEqual({ message: 'pong' });
    expect(anvil.child.exitCode).toBeNull();
  });
});
