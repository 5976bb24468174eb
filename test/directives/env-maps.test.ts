import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessApis } from '../helpers/in-process-apis.js';

// Maps/<env>/ over Maps/main, per env, in-process (helpers/in-process-apis.ts).

const greeter = join(import.meta.dirname, '../../apis/greeter');
const running: InProcessApis[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.dispose()));
});

async function start(env: string) {
  const apis = await InProcessApis.start({ greeter }, { env });
  running.push(apis);
  return apis;
}

describe('Maps with env overrides', () => {
  it('deep-merges Maps/dev over Maps/main on a dev host', async () => {
    const anvil = await start('dev');
    const reply = await anvil.request('/greeter/hello/Ann');
    expect(reply.json()).toEqual({
      greeting: 'Hi (dev), Ann!',
      env: 'dev',
      // objects merge, arrays replace
      environment: { name: 'development', features: ['a', 'debug'], banner: true },
    });
  });

  it('deep-merges Maps/pro over Maps/main on a pro host', async () => {
    const anvil = await start('pro');
    const reply = await anvil.request('/greeter/hello/Ann');
    expect(reply.json()).toEqual({
      greeting: 'Hello, Ann!',
      env: 'pro',
      environment: { name: 'production', features: ['a'], banner: true },
    });
  });

  it('uses Maps/main alone in an env without overrides', async () => {
    const anvil = await start('staging');
    expect((await anvil.request('/greeter/settings')).json()).toEqual({
      greeting: 'Hello',
      punctuation: '!',
      environment: { name: 'base', features: ['a'], banner: true },
    });
  });
});
