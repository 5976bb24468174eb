import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { quotaRefusals } from '../helpers/metrics.js';
import { removeRedisKeys, storeBackends } from '../helpers/store-backends.js';

// Issue 21, quotas on shared things: the bytes an API keeps in the key-value store, over HTTP, on
// the embedded store and on Redis. Pull's cache fills it; each cached answer is ~1.1 KB. The
// instance's ceiling is lowered with --max-kv-bytes; one API asks for less in api.yaml. The rate
// limit's label is 200 bytes long and it keeps four counters: more room than a full API has left.
const cacher = (key: string, limits: string) => `key: ${key}
${limits}
endpoints:
  get /fetch/{n}:
    Get: { directive: Pull, host: $.memory.anvil-localhost, path: /source/blob, queryParams: { n: $.message.pathParam.n }, target: got, cache: 600 }
    Reply: { directive: ModifyMessage, body: { ok: true } }
  get /limited:
    Limit: { directive: RateLimit, path: ${'p'.repeat(200)}, dayTotal: 100, dayIp: 100, minuteTotal: 100, minuteIp: 100, failOpen: false }
    Reply: { directive: ModifyMessage, body: { ok: true } }
`;
const APIS = {
  source: {
    'api.yaml': `key: source\nendpoints:\n  get /blob:\n    Reply: { directive: ModifyMessage, body: "${'x'.repeat(700)}" }\n`,
  },
  // 2 KiB: one cached answer fits, a second does not
  modest: {
    'api.yaml': `${cacher('modest', 'limits: { kvKb: 2 }')}after:\n  OnError: { directive: OnError, groups: [ERROR_FLOW] }\n`,
  },
  // asks for 100 KiB, gets the instance's 3 KiB: two answers fit, a third does not
  greedy: { 'api.yaml': cacher('greedy', 'limits: { kvKb: 100 }') },
  neighbour: { 'api.yaml': cacher('neighbour', '') },
};

for (const [name, env] of storeBackends('embedded store', 'Redis')) {
  describe(`key-value quota on the ${name}`, () => {
    let anvil: TestInstance;
    beforeAll(async () => {
      anvil = await startInstance({ apis: APIS, env, args: ['--max-kv-bytes', '3KiB'] });
    });
    afterAll(async () => {
      await anvil?.dispose();
      await removeRedisKeys(env);
    });

    it("a cache write past the API's quota fails the directive with 507 and a message naming the quota", async () => {
      const first = await anvil.request('/modest/fetch/1');
      expect(first.status, first.text).toBe(200);
      expect(first.json()).toEqual({ ok: true });
      const second = await anvil.request('/modest/fetch/2');
      expect(second.status).toBe(507);
      expect(second.json().error).toMatch(
        /^this write would make the API's keys and values in the key-value store \d+ bytes, over its quota of 2048 bytes \(api\.yaml limits\.kvKb, at most --max-kv-bytes\)$/,
      );
      // What is cached still answers.
      expect((await anvil.request('/modest/fetch/1')).status).toBe(200);
      await eventually(async () => (await quotaRefusals(anvil, 'modest', 'kv_bytes')) === 1);
    });

    it('an API asking for more than the instance allows gets the ceiling; a message without OnError is the same', async () => {
      for (const n of [1, 2]) expect((await anvil.request(`/greedy/fetch/${n}`)).status).toBe(200);
      const third = await anvil.request('/greedy/fetch/3');
      expect(third.status).toBe(507);
      expect(third.json().error).toMatch(/over its quota of 3072 bytes/);
    });

    it("a full API does not touch its neighbour's room", async () => {
      for (const n of [1, 2]) expect((await anvil.request(`/neighbour/fetch/${n}`)).status).toBe(200);
      expect(await quotaRefusals(anvil, 'neighbour', 'kv_bytes')).toBe(0);
    });

    it('a counter that needs room it has not is refused like any write (RateLimit failing closed)', async () => {
      const reply = await anvil.request('/modest/limited');
      expect(reply.status).toBe(507);
      expect(reply.json().error).toMatch(/over its quota of 2048 bytes/);
      await eventually(async () => (await quotaRefusals(anvil, 'modest', 'kv_bytes')) === 2);
    });
  });
}
