import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

// Authenticate (SPEC §7): Basic against `users` and Bearer against `tokens` (a map token →
// principal, or a list), both read from the API's map. Missing or wrong credentials: 401 with
// `www-authenticate`; success: the principal in memory `user`, which the endpoints echo.

const API = `key: auth
endpoints:
  get /basic:
    Auth: { directive: Authenticate, scheme: basic, users: $.map.main.users }
    Reply: { directive: ModifyMessage, body: { user: $.memory.user } }
  get /basic/realm:
    Auth: { directive: Authenticate, scheme: basic, users: $.map.main.users, realm: Staff only }
    Reply: { directive: ModifyMessage, body: { user: $.memory.user } }
  get /bearer/map:
    Auth: { directive: Authenticate, scheme: bearer, tokens: $.map.main.tokens }
    Reply: { directive: ModifyMessage, body: { user: $.memory.user } }
  get /bearer/list:
    Auth: { directive: Authenticate, scheme: bearer, tokens: $.map.main.tokenList }
    Reply: { directive: ModifyMessage, body: { user: $.memory.user } }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

const MAPS = JSON.stringify({
  users: { alice: 's3cret', bob: 'pa:ss:word', carol: 12345 },
  tokens: { 'tok-admin-0001': { name: 'root', role: 'admin' }, 'tok-reader-0002': 'reader' },
  tokenList: ['list-token-a', 'list-token-b'],
});

let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({ apis: { auth: { 'api.yaml': API, 'Maps/main.json': MAPS } } });
});
afterAll(async () => anvil?.dispose());

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const call = (path: string, authorization?: string) =>
  anvil.request(`/auth${path}`, authorization === undefined ? {} : { headers: { authorization } });

async function expectRefused(path: string, authorization: string | undefined, challenge: string): Promise<void> {
  const reply = await call(path, authorization);
  expect(reply.status, `${path} with ${authorization}`).toBe(401);
  expect(reply.headers['www-authenticate']).toBe(challenge);
  expect(reply.json()).toEqual({ error: 'Unauthorized' });
}

describe('Authenticate, basic', () => {
  it('accepts a user of the map and puts the name in memory `user`', async () => {
    const reply = await call('/basic', basic('alice', 's3cret'));
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({ user: 'alice' });
    // A password may contain colons: only the first one separates the name.
    expect((await call('/basic', basic('bob', 'pa:ss:word'))).json()).toEqual({ user: 'bob' });
    // A number in the map is compared as its text.
    expect((await call('/basic', basic('carol', '12345'))).json()).toEqual({ user: 'carol' });
    // The scheme name is case-insensitive.
    expect((await call('/basic', basic('alice', 's3cret').replace('Basic', 'basic'))).status).toBe(200);
  });

  it('refuses missing or wrong credentials with 401 and a Basic challenge (realm: the API key by default)', async () => {
    const challenge = 'Basic realm="auth"';
    await expectRefused('/basic', undefined, challenge);
    await expectRefused('/basic', basic('alice', 'wrong'), challenge);
    await expectRefused('/basic', basic('alice', 'S3CRET'), challenge);
    await expectRefused('/basic', basic('mallory', 's3cret'), challenge);
    await expectRefused('/basic', basic('alice', ''), challenge);
    await expectRefused('/basic', basic('', ''), challenge);
    await expectRefused('/basic', basic('alice', 's3cretx'), challenge); // the password and more
    await expectRefused('/basic', basic('Alice', 's3cret'), challenge); // names are case-sensitive
    await expectRefused('/basic', `Basic ${Buffer.from('alice').toString('base64')}`, challenge); // no colon
    await expectRefused('/basic', 'Basic', challenge);
    await expectRefused('/basic', 'Basic !!!not-base64!!!', challenge);
    await expectRefused('/basic', 'Bearer tok-admin-0001', challenge); // the other scheme
    // Another user's password.
    await expectRefused('/basic', basic('alice', 'pa:ss:word'), challenge);
  });

  it('names the realm it was given', async () => {
    await expectRefused('/basic/realm', undefined, 'Basic realm="Staff only"');
    expect((await call('/basic/realm', basic('alice', 's3cret'))).json()).toEqual({ user: 'alice' });
  });
});

describe('Authenticate, bearer', () => {
  it('with a token map, puts the principal the token maps to in memory `user`', async () => {
    const admin = await call('/bearer/map', 'Bearer tok-admin-0001');
    expect(admin.status, admin.text).toBe(200);
    expect(admin.json()).toEqual({ user: { name: 'root', role: 'admin' } });
    expect((await call('/bearer/map', 'Bearer tok-reader-0002')).json()).toEqual({ user: 'reader' });
    expect((await call('/bearer/map', 'bearer tok-reader-0002')).status).toBe(200);
  });

  it('with a token list, accepts each listed token (the principal is its position)', async () => {
    expect((await call('/bearer/list', 'Bearer list-token-a')).json()).toEqual({ user: 0 });
    expect((await call('/bearer/list', 'Bearer list-token-b')).json()).toEqual({ user: 1 });
  });

  it('refuses missing or wrong tokens with 401 and a Bearer challenge', async () => {
    const challenge = 'Bearer realm="auth"';
    for (const path of ['/bearer/map', '/bearer/list']) {
      await expectRefused(path, undefined, challenge);
      await expectRefused(path, 'Bearer', challenge);
      await expectRefused(path, 'Bearer ', challenge);
      await expectRefused(path, 'Bearer nope', challenge);
      await expectRefused(path, 'Bearer list-token-', challenge); // a prefix of a token
      await expectRefused(path, 'Bearer tok-admin-0001x', challenge); // a token and more
      await expectRefused(path, basic('alice', 's3cret'), challenge); // the other scheme
      await expectRefused(path, 'tok-admin-0001', challenge); // no scheme
    }
    // A token of the other endpoint's list is not one of this one's.
    await expectRefused('/bearer/map', 'Bearer list-token-a', challenge);
    await expectRefused('/bearer/list', 'Bearer tok-admin-0001', challenge);
    // A principal is not a token.
    await expectRefused('/bearer/map', 'Bearer reader', challenge);
  });
});
