import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Reply, type RequestOptions } from '../helpers/instance.js';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { waitFor } from '../helpers/wait-for.js';

// The example API of apis/users (the one `npm start` serves), over HTTP against a real instance:
// CRUD over its own SQLite database, validation, 404/409, and its log.

const USERS_API = join(import.meta.dirname, '../../apis/users');
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let anvil: InProcessApis;
/** Every request this file made: its id (x-correlation-id) and status, to check the log. */
const sent: Array<{ id: string; status: number }> = [];

beforeAll(async () => {
  anvil = await startInProcess({ apis: { users: USERS_API } });
});
afterAll(async () => anvil?.dispose());

async function call(path: string, options: RequestOptions = {}): Promise<Reply> {
  const reply = await anvil.request(`/users${path}`, options);
  sent.push({ id: String(reply.headers['x-correlation-id']), status: reply.status });
  return reply;
}

function send(method: string, path: string, body: unknown): Promise<Reply> {
  return call(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/**
 * Waits until the clock is past `iso` (timestamps have millisecond precision: an update in the
 * same millisecond could not move updated_at). Usually it already is.
 */
const clockPast = (iso: string) => waitFor(() => Date.now() > Date.parse(iso), { what: `the clock to pass ${iso}` });

/** A 400 whose error names every field given, with one problem per field. */
function expectInvalid(reply: Reply, fields: string[]): void {
  expect(reply.status, reply.text).toBe(400);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  const body = reply.json();
  expect(body.error).toMatch(/^invalid user: /);
  for (const field of fields) expect(body.error).toContain(field);
  expect(body.problems.map((p: { field: string }) => p.field)).toEqual(fields);
  for (const problem of body.problems) expect(typeof problem.message).toBe('string');
}

let location = '';
let alan: { id: number; name: string; email: string; created_at: string; updated_at: string };

describe('apis/users: a CRUD example over its own database', () => {
  it('lists the two seeded users (migrations 001 and 002 applied on the first request)', async () => {
    const reply = await call('');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    const body = reply.json();
    expect(body).toMatchObject({ total: 2, limit: 20, offset: 0 });
    expect(body.users.map((u: { id: number; name: string; email: string }) => [u.id, u.name, u.email])).toEqual([
      [1, 'Ada Lovelace', 'ada@example.com'],
      [2, 'Grace Hopper', 'grace@example.com'],
    ]);
    for (const user of body.users) {
      expect(user.created_at).toMatch(ISO_TIME);
      expect(user.updated_at).toMatch(ISO_TIME);
    }
    // A trailing slash is the same route.
    expect((await call('/')).json()).toEqual(body);
  });

  it('creates a user: 201, a location header and the user as stored (trimmed, email in lower case)', async () => {
    const reply = await send('POST', '', { name: '  Alan Turing ', email: 'Alan@Example.COM' });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.headers['content-type']).toBe('application/json');
    alan = reply.json();
    expect(alan).toEqual({
      id: 3,
      name: 'Alan Turing',
      email: 'alan@example.com',
      created_at: alan.created_at,
      updated_at: alan.created_at,
    });
    expect(alan.created_at).toMatch(ISO_TIME);
    expect(reply.headers.location).toBe('/users/3');
    location = String(reply.headers.location);
  });

  it('reads it back at its location', async () => {
    const reply = await call(location.replace(/^\/users/, ''));
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.json()).toEqual(alan);
    // Nothing of the request is echoed back.
    const withCookie = await call('/3', { headers: { cookie: 'session=secret' } });
    expect(JSON.stringify(withCookie.headers)).not.toContain('secret');
  });

  it('pages the list with ?limit= and ?offset= (limit capped at 100)', async () => {
    const names = (reply: Reply) => reply.json().users.map((u: { name: string }) => u.name);
    const page1 = await call('?limit=2');
    expect(page1.status).toBe(200);
    expect(page1.json()).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect(names(page1)).toEqual(['Ada Lovelace', 'Grace Hopper']);
    const page2 = await call('?limit=2&offset=2');
    expect(page2.json()).toMatchObject({ total: 3, limit: 2, offset: 2 });
    expect(names(page2)).toEqual(['Alan Turing']);
    expect(names(await call('?offset=1&limit=1'))).toEqual(['Grace Hopper']);
    expect(names(await call('?offset=10'))).toEqual([]);
    const capped = await call('?limit=5000');
    expect(capped.json()).toMatchObject({ total: 3, limit: 100, offset: 0 });
    expect(names(capped)).toHaveLength(3);
    // Empty values are the defaults.
    expect((await call('?limit=&offset=')).json()).toMatchObject({ limit: 20, offset: 0 });
  });

  it('refuses a bad limit or offset with a 400 naming it', async () => {
    for (const [query, fields] of [
      ['?limit=0', ['limit']],
      ['?limit=abc', ['limit']],
      ['?limit=1.5', ['limit']],
      ['?offset=-1', ['offset']],
      ['?limit=1&limit=2', ['limit']],
      ['?limit=x&offset=y', ['limit', 'offset']],
    ] as const) {
      const reply = await call(query);
      expect(reply.status, query).toBe(400);
      const { error } = reply.json();
      for (const field of fields) expect(error, query).toContain(`${field} must be an integer`);
    }
  });

  it('PUT replaces name and email; updated_at moves, created_at stays', async () => {
    await clockPast(alan.updated_at);
    const reply = await send('PUT', '/3', { name: 'Alan M. Turing', email: 'turing@example.org' });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    const user = reply.json();
    expect(user).toMatchObject({
      id: 3,
      name: 'Alan M. Turing',
      email: 'turing@example.org',
      created_at: alan.created_at,
    });
    expect(user.updated_at > alan.updated_at).toBe(true);
    expect((await call('/3')).json()).toEqual(user);
    alan = user;
  });

  it('PATCH changes only the fields given; updated_at moves', async () => {
    await clockPast(alan.updated_at);
    const reply = await send('PATCH', '/3', { name: 'Alan Turing' });
    expect(reply.status, reply.text).toBe(200);
    const user = reply.json();
    expect(user).toMatchObject({
      id: 3,
      name: 'Alan Turing',
      email: 'turing@example.org',
      created_at: alan.created_at,
    });
    expect(user.updated_at > alan.updated_at).toBe(true);
    await clockPast(user.updated_at);
    const email = await send('PATCH', '/3', { email: 'alan@example.com' });
    expect(email.json()).toMatchObject({ name: 'Alan Turing', email: 'alan@example.com' });
    expect(email.json().updated_at > user.updated_at).toBe(true);
    alan = email.json();
    expect((await call('/3')).json()).toEqual(alan);
  });

  it('refuses invalid bodies with a 400 naming each bad field, and writes nothing', async () => {
    // Missing name.
    const missing = await send('POST', '', { email: 'bob@example.com' });
    expectInvalid(missing, ['name']);
    expect(missing.json()).toEqual({
      error: 'invalid user: name is required',
      problems: [{ field: 'name', message: 'is required' }],
    });
    // Bad email.
    expectInvalid(await send('POST', '', { name: 'Bob', email: 'not-an-email' }), ['email']);
    expectInvalid(await send('POST', '', { name: 'Bob', email: 'bob@example' }), ['email']);
    expectInvalid(await send('POST', '', { name: 'Bob', email: `${'b'.repeat(190)}@example.com` }), ['email']);
    // Unknown field.
    const unknown = await send('POST', '', { name: 'Bob', email: 'bob@example.com', role: 'admin' });
    expectInvalid(unknown, ['role']);
    expect(unknown.json().error).toBe('invalid user: role is not a field of a user (name, email)');
    // Names: empty, too long, not a string.
    expectInvalid(await send('POST', '', { name: '   ', email: 'bob@example.com' }), ['name']);
    expectInvalid(await send('POST', '', { name: 'x'.repeat(101), email: 'bob@example.com' }), ['name']);
    expect((await send('POST', '', { name: '😀'.repeat(100), email: 'emoji@example.com' })).status).toBe(201);
    expectInvalid(await send('POST', '', { name: 42, email: null }), ['name', 'email']);
    // Every problem at once.
    expectInvalid(await send('POST', '', { name: '', email: 'nope', emial: 'typo@example.com' }), [
      'name',
      'email',
      'emial',
    ]);
    // Not a JSON object at all.
    expectInvalid(
      await call('', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{broken' }),
      ['body'],
    );
    expectInvalid(await send('POST', '', [{ name: 'Bob', email: 'bob@example.com' }]), ['body']);
    expectInvalid(await call('', { method: 'POST' }), ['body']);
    // PUT needs both fields.
    expectInvalid(await send('PUT', '/3', { name: 'Only A Name' }), ['email']);
    // PATCH with an empty body, or none: the message says which fields it may have.
    const empty = await send('PATCH', '/3', {});
    expectInvalid(empty, ['body']);
    expect(empty.json().error).toBe('invalid user: body must have at least one of name, email');
    const none = await call('/3', { method: 'PATCH' });
    expectInvalid(none, ['body']);
    expect(none.json().error).toContain('name, email');
    // PATCH checks the fields it has; null is not a way to clear a field.
    expectInvalid(await send('PATCH', '/3', { email: 'bad' }), ['email']);
    expectInvalid(await send('PATCH', '/3', { name: null }), ['name']);
    // Nothing changed.
    expect((await call('/3')).json()).toEqual(alan);
    expect((await call('')).json().total).toBe(4);
  });

  it('refuses an id that is not a positive integer with a 400 naming id', async () => {
    for (const id of ['abc', '0', '-1', '1.5', '01', '1e3', '99999999999999999999', '%20']) {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
        const reply = await send(method, `/${id}`, { name: 'X', email: 'x@example.com' });
        expect(reply.status, `${method} /${id}`).toBe(400);
        expect(reply.json().error, `${method} /${id}`).toMatch(/^id must be a positive integer, not "/);
      }
    }
    expect((await call('/abc')).json()).toEqual({ error: 'id must be a positive integer, not "abc"' });
  });

  it('answers 404 for an id that does not exist', async () => {
    const reply = await call('/42');
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(reply.json()).toEqual({ error: 'user 42 not found' });
    expect((await send('PUT', '/42', { name: 'X', email: 'x@example.com' })).json()).toEqual({
      error: 'user 42 not found',
    });
    expect((await send('PATCH', '/42', { name: 'X' })).status).toBe(404);
    expect((await call('/42', { method: 'DELETE' })).json()).toEqual({ error: 'user 42 not found' });
  });

  it('answers 409 for an email that is already taken, in any case, on create and on update', async () => {
    const taken = await send('POST', '', { name: 'Ada Again', email: 'ada@example.com' });
    expect(taken.status).toBe(409);
    expect(taken.json()).toEqual({ error: 'email ada@example.com is already taken' });
    expect((await send('POST', '', { name: 'Ada Again', email: 'ADA@example.com' })).status).toBe(409);
    const put = await send('PUT', '/3', { name: 'Alan Turing', email: 'grace@example.com' });
    expect(put.status).toBe(409);
    expect(put.json()).toEqual({ error: 'email grace@example.com is already taken' });
    expect((await send('PATCH', '/3', { email: 'Grace@Example.com' })).status).toBe(409);
    // Its own email is not "taken".
    expect((await send('PATCH', '/3', { email: 'alan@example.com' })).status).toBe(200);
    expect((await call('')).json().total).toBe(4);
  });

  it('deletes: 204 without a body, then the user is gone (404)', async () => {
    const reply = await call('/3', { method: 'DELETE' });
    expect(reply.status).toBe(204);
    expect(reply.text).toBe('');
    expect(reply.headers['content-type']).toBeUndefined();
    const gone = await call('/3');
    expect(gone.status).toBe(404);
    expect(gone.json()).toEqual({ error: 'user 3 not found' });
    expect((await call('/3', { method: 'DELETE' })).status).toBe(404);
    const list = (await call('')).json();
    expect(list.total).toBe(3);
    expect(list.users.map((u: { id: number }) => u.id)).toEqual([1, 2, 4]);
    // And the API goes on creating users.
    const next = await send('POST', '', { name: 'Linus', email: 'linus@example.com' });
    expect(next.status).toBe(201);
    expect(next.headers.location).toBe(`/users/${next.json().id}`);
  });

  it('writes one log line per request to <data>/localhost/dev/users/logs/*.jsonl', async () => {
    const logs = join(anvil.dataDir, 'localhost', 'dev', 'users', 'logs');
    const read = () =>
      readdirSync(logs)
        .filter((f) => f.endsWith('.jsonl'))
        .flatMap((f) => readFileSync(join(logs, f), 'utf8').split('\n').filter(Boolean))
        .map(
          (line) => JSON.parse(line) as { id: string; status: number; verb: string; path: string; errors: unknown[] },
        );
    // Log runs in AFTER_FLOW, after the response: wait until the last request's line is there.
    const lines = await eventually(() => {
      const all = read();
      return all.length >= sent.length ? all : null;
    });
    expect(lines).toHaveLength(sent.length);
    const byId = new Map(lines.map((l) => [l.id, l]));
    expect(byId.size).toBe(sent.length);
    for (const request of sent) expect(byId.get(request.id)?.status, request.id).toBe(request.status);
    // Errors are logged with the entry that failed.
    const notFound = lines.find((l) => l.status === 404)!;
    expect(notFound.errors).toEqual([
      expect.objectContaining({ status: 404, message: expect.stringMatching(/^user \d+ not found$/) }),
    ]);
  });
});
