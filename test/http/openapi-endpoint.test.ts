import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';

const secured = join(import.meta.dirname, '../../apis/secured');

describe('GET /anvil/api/<key>/openapi.json', () => {
  let anvil: TestInstance;
  beforeAll(async () => {
    anvil = await startInstance({ apis: { secured } });
  });
  afterAll(() => anvil.dispose());

  it('describes the current release as a valid OpenAPI 3.1 document, served under /<key>', async () => {
    const record = (await anvil.admin('/anvil/api/secured')).json();
    const reply = await anvil.admin('/anvil/api/secured/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    const document = reply.json();
    expect(await new Validator().validate(document)).toMatchObject({ valid: true });
    expect(document.info).toMatchObject({ title: 'secured', version: record.release });
    expect(document.servers).toEqual([{ url: '/secured' }]);
    expect(document.paths['/status'].get.security).toEqual([{ 'header.api-key': [] }]);
  });

  it('answers 404 for an unknown API, 405 for another method, 401 without the public host key', async () => {
    expect((await anvil.admin('/anvil/api/nope/openapi.json')).status).toBe(404);
    expect((await anvil.admin('/anvil/api/secured/other.json')).status).toBe(404);
    const post = await anvil.admin('/anvil/api/secured/openapi.json', { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect((await anvil.request('/anvil/api/secured/openapi.json', { host: 'admin.localhost' })).status).toBe(401);
  });
});
