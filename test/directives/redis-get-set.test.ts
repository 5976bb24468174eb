import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { removeRedisKeys, storeBackends } from '../helpers/store-backends.js';
import { waitFor } from '../helpers/wait-for.js';

// Issue 25: RedisGet / RedisSet in the API's key space (and with `global` the space its public
// host and env share), on the embedded store and on Redis, over HTTP. A second public host is
// another tenant: it has an API of the same key, in the same env, and reaches none of the first's.
// In-process (helpers/in-process-apis.ts): the actors' stores, embedded in the data dir both hosts
// share or in Redis; the second host's API beside the first's, on the same data dir.
const store = (key: string, limits = '') => `key: ${key}
debug: true
${limits}
endpoints:
  put /value/{name}:
    Set: { directive: RedisSet, key: $.message.pathParam.name, value: $.message.body.value, expire: $.message.query.expire, global: $.message.query.global }
    Reply: { directive: ModifyMessage, status: 204 }
  put /default/{name}:
    Set: { directive: RedisSet, key: $.message.pathParam.name, value: $.message.body.value }
    Reply: { directive: ModifyMessage, status: 204 }
  get /value/{name}:
    Before: { directive: SetMemory, target: found, value: left over from an earlier step }
    Get: { directive: RedisGet, key: $.message.pathParam.name, target: found, global: $.message.query.global }
    Reply: { directive: ModifyMessage, body: { found: $.memory.found } }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

const APIS = {
  alpha: { 'api.yaml': store('alpha') },
  beta: { 'api.yaml': store('beta') },
  small: { 'api.yaml': store('small', 'limits: { kvKb: 1 }') },
};

for (const [name, env] of storeBackends('embedded store', 'Redis')) {
  describe(`RedisGet and RedisSet on the ${name}`, () => {
    let anvil: InProcessApis;
    /** The API of the same key on the public host other.localhost, in the same env. */
    let other: InProcessApis;
    beforeAll(async () => {
      anvil = await startInProcess({ apis: APIS, env });
      other = await startInProcess({
        apis: { alpha: { 'api.yaml': store('alpha') } },
        env,
        host: 'other.localhost',
        dataDir: anvil.dataDir,
      });
    });
    afterAll(async () => {
      await other?.dispose();
      await anvil?.dispose();
      await removeRedisKeys(env);
    });

    /** How long the store keeps a key of a namespace still, read from the store itself. */
    const msLeft = async (ns: string, key: string): Promise<number> => {
      if (env.REDIS_URL === undefined) {
        const db = new Database(join(anvil.dataDir, '.anvil', 'kv.sqlite'), { readonly: true });
        const row = db.prepare('SELECT expires_at FROM kv WHERE ns = ? AND key = ?').get(ns, key) as {
          expires_at: number;
        };
        db.close();
        return row.expires_at - Date.now();
      }
      const redis = new Redis(env.REDIS_URL);
      const left = await redis.pttl(`${env.ANVIL_REDIS_PREFIX}${Buffer.byteLength(ns)}:${ns}:${key}`);
      await redis.quit();
      return left;
    };
    const put = (path: string, value: unknown, host?: 'other') =>
      (host ? other : anvil).request(path, {
        method: 'PUT',
        body: JSON.stringify({ value }),
        headers: { 'content-type': 'application/json' },
      });
    const get = async (path: string, host?: 'other'): Promise<unknown> => {
      const reply = await (host ? other : anvil).request(path);
      expect(reply.status, reply.text).toBe(200);
      return reply.json().found;
    };

    it('keeps maps, lists and scalars as they were set', async () => {
      const values = {
        map: { a: 1, b: [true, null, 'x'] },
        list: [1, 2, 3],
        text: 'hello',
        number: 42.5,
        yes: true,
        zero: 0,
      };
      for (const [key, value] of Object.entries(values)) {
        const reply = await put(`/alpha/value/${key}`, value);
        expect(reply.status, reply.text).toBe(204);
      }
      for (const [key, value] of Object.entries(values)) expect(await get(`/alpha/value/${key}`)).toEqual(value);
    });

    it('gives null for a key never set, never what target held before', async () => {
      expect(await get('/alpha/value/never-set')).toBeNull();
    });

    it('null deletes the key', async () => {
      await put('/alpha/value/gone', 'here');
      expect(await get('/alpha/value/gone')).toBe('here');
      await put('/alpha/value/gone', null);
      expect(await get('/alpha/value/gone')).toBeNull();
    });

    it('forgets a value after `expire` seconds', async () => {
      expect((await put('/alpha/value/brief?expire=0.3', 'soon gone')).status).toBe(204);
      expect((await put('/alpha/default/kept', 'for 600 s')).status).toBe(204);
      await waitFor(async () => (await get('/alpha/value/brief')) === null, {
        what: 'the value set with expire 0.3 to expire',
      });
      expect(await get('/alpha/value/kept')).toBe('for 600 s');
      const left = await msLeft('localhost/dev/alpha', 'data:kept');
      expect(left).toBeGreaterThan(590_000);
      expect(left).toBeLessThanOrEqual(600_000);
    });

    it("keeps each API's keys apart; `global` is one space for the APIs of one public host and env", async () => {
      await put('/alpha/value/shared', 'alpha own');
      await put('/alpha/value/shared?global=true', 'for the whole env');
      expect(await get('/beta/value/shared')).toBeNull();
      expect(await get('/beta/value/shared?global=true')).toBe('for the whole env');
      expect(await get('/alpha/value/shared')).toBe('alpha own');
      await put('/beta/value/shared?global=true', 'beta wrote it');
      expect(await get('/alpha/value/shared?global=true')).toBe('beta wrote it');
    });

    it("never reaches another tenant's keys, even of an API of the same key in the same env", async () => {
      await put('/alpha/value/tenant', 'first host');
      await put('/alpha/value/tenant?global=true', 'first host, global');
      expect(await get('/alpha/value/tenant', 'other')).toBeNull();
      expect(await get('/alpha/value/tenant?global=true', 'other')).toBeNull();
      await put('/alpha/value/tenant?global=true', 'other host, global', 'other');
      expect(await get('/alpha/value/tenant?global=true')).toBe('first host, global');
      expect(await get('/alpha/value/tenant?global=true', 'other')).toBe('other host, global');
    });

    it("holds a write to the API's quota (limits.kvKb), in its own space and in the shared one", async () => {
      const big = 'x'.repeat(1500);
      for (const query of ['', '?global=true']) {
        const refused = await put(`/small/value/big${query}`, big);
        expect(refused.status).toBe(507);
        expect(refused.json().error).toMatch(
          /over its quota of 1024 bytes \(api\.yaml limits\.kvKb, at most --max-kv-bytes\)$/,
        );
        expect(await get(`/small/value/big${query}`)).toBeNull();
      }
      // The larger quota of another API of the host lets it write there.
      expect((await put('/alpha/value/big?global=true', big)).status).toBe(204);
    });

    it('refuses a bad parameter from an alias with a message naming it', async () => {
      const reply = await put('/alpha/value/k?expire=-1', 'v');
      expect(reply.status).toBe(500);
      expect(reply.json().error).toBe('parameter "expire" of "Set": must be > 0');
    });
  });
}
