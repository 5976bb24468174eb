import { describe, expect, it } from 'vitest';
import { apiIdOf, formatActorId, formatApiId, parseApiId, sameApi } from '../../src/shared/protocol/api-id.js';

const users = { host: 'api.example.com', env: 'prod', key: 'users' };

describe('API ids', () => {
  it('format as <host>/<env>/<key>, and an actor as <host>/<env>/<key>@<release>', () => {
    expect(formatApiId(users)).toBe('api.example.com/prod/users');
    expect(formatActorId(users, '20240101-1')).toBe('api.example.com/prod/users@20240101-1');
  });

  it('read back into their parts (a part the string lacks is empty)', () => {
    expect(parseApiId(formatApiId(users))).toEqual(users);
    expect(parseApiId('localhost/dev')).toEqual({ host: 'localhost', env: 'dev', key: '' });
  });

  it('keep only the parts of a spec, and compare by them', () => {
    const spec = { ...users, id: formatActorId(users, 'r1'), release: 'r1' };
    expect(apiIdOf(spec)).toEqual(users);
    expect(sameApi(spec, users)).toBe(true);
    expect(sameApi(spec, { ...users, env: 'dev' })).toBe(false);
  });
});
