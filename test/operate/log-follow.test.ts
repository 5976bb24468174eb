import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { slowReader } from '../helpers/slow-reader.js';
import { openSse, type SseClient } from '../helpers/sse-client.js';
import { waitFor } from '../helpers/wait-for.js';

// Issue 26: an API's request log on the admin host, the last lines as JSON or live as Server-Sent
// Events, with filters; bounded (followers per API, bytes per follower) and back-pressured.

const ADMIN = { 'public-host': 'localhost', 'public-host-key': TEST_KEY };
const LOGGER = `key: logger
endpoints:
  get /ok:
    Reply: { directive: ModifyMessage, body: { ok: true } }
  get /fail:
    Fail: { directive: ThrowError, status: 503, message: down for a while }
  get /hit/{n}:
    Reply: { directive: ModifyMessage, body: { n: 1 } }
after:
  Log: { directive: Log, groups: [AFTER_FLOW] }
`;

let anvil: TestInstance;

beforeAll(async () => {
  anvil = await startInstance({
    apis: { logger: { 'api.yaml': LOGGER } },
    args: ['--log-followers', '3', '--log-follow-buffer', '64KiB'],
  });
});
afterAll(async () => anvil?.dispose());

const follow = (query = '', headers: Record<string, string> = ADMIN) =>
  openSse(anvil.port, `/anvil/api/logger/logs?follow=1${query}`, 'admin.localhost', headers);

function routerRssMb(): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${anvil.pid}/status`, 'utf8'))![1]) / 1024;
}

describe('GET /anvil/api/<key>/logs?follow=1', () => {
  it('streams a 5xx line live, and with status=5xx only such lines', async () => {
    const errors = await follow('&status=5xx');
    const everything = await follow();
    try {
      expect(errors.status).toBe(200);
      expect(errors.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect((await anvil.request('/logger/ok')).status).toBe(200);
      expect((await anvil.request('/logger/fail')).status).toBe(503);
      const failed = JSON.parse(await errors.next((d) => d.includes('"/fail"')));
      expect(failed).toMatchObject({ verb: 'GET', path: '/fail', route: 'get /fail', status: 503 });
      expect(failed.errors[0]).toMatchObject({ status: 503, message: 'down for a while' });
      await everything.next((d) => d.includes('"/fail"'));
      expect(everything.events.map((d) => JSON.parse(d).path)).toEqual(['/ok', '/fail']);
      expect(errors.events.map((d) => JSON.parse(d).path)).toEqual(['/fail']);
    } finally {
      errors.close();
      everything.close();
    }
  });

  it('filters by route and by text', async () => {
    const byRoute = await follow(`&route=${encodeURIComponent('get /hit/{n}')}`);
    const byText = await follow('&text=NEEDLE');
    try {
      await anvil.request('/logger/ok');
      await anvil.request('/logger/hit/1');
      await anvil.request('/logger/hit/needle-2');
      await byRoute.next((d) => d.includes('needle-2'));
      await byText.next((d) => d.includes('needle-2'));
      expect(byRoute.events.map((d) => JSON.parse(d).path)).toEqual(['/hit/1', '/hit/needle-2']);
      expect(byText.events.map((d) => JSON.parse(d).path)).toEqual(['/hit/needle-2']);
    } finally {
      byRoute.close();
      byText.close();
    }
  });

  it('takes at most --log-followers clients per API (429 beyond), and a place frees when one leaves', async () => {
    const clients: SseClient[] = [await follow(), await follow(), await follow()];
    try {
      const refused = await follow();
      expect(refused.status).toBe(429);
      await refused.ended;
      expect(JSON.parse(refused.text()).error).toContain('as many followers as it may have');
      clients.shift()!.close();
      const admitted = await waitFor(
        async () => {
          const next = await follow();
          if (next.status === 200) return next;
          next.close();
          return null;
        },
        { what: 'a follower admitted once one left' },
      );
      clients.push(admitted);
    } finally {
      for (const client of clients) client.close();
    }
  });

  it('drops a follower that stops reading, without the router holding its lines, while others go on', async () => {
    const slow = slowReader(anvil.port, '/anvil/api/logger/logs?follow=1', 'admin.localhost', ADMIN);
    await slow.headed;
    const fast = await follow('&text=after-the-drop');
    const rssBefore = routerRssMb();
    // Lines of about 6 KiB (the path is in each): far more than the socket buffers and 64 KiB take.
    const long = 'x'.repeat(6000);
    const agent = new Agent({ connections: 16 });
    let sent = 0;
    try {
      while (!anvil.output().includes('request log follower dropped') && sent < 6000) {
        await Promise.all(
          Array.from({ length: 100 }, () =>
            request(`http://127.0.0.1:${anvil.port}/logger/hit/${long}`, {
              headers: { host: 'localhost' },
              dispatcher: agent,
            }).then((r) => r.body.dump()),
          ),
        );
        sent += 100;
      }
      await waitFor(() => anvil.output().includes('request log follower dropped'), {
        what: 'the slow follower dropped',
        timeoutMs: 15_000,
      });
      const rest = await slow.readRest();
      // The server closed it: it got part of the stream, never all ~6 KiB × `sent` lines.
      expect(rest.status).toBe(200);
      expect(rest.received).toBeLessThan(sent * 6000);
      expect(routerRssMb() - rssBefore).toBeLessThan(64);

      await anvil.request('/logger/hit/after-the-drop');
      await fast.next((d) => d.includes('after-the-drop'));
    } finally {
      slow.destroy();
      fast.close();
      await agent.close();
    }
  });

  it('refuses without the admin credentials, and for an unknown API or a bad filter', async () => {
    expect((await follow('', {})).status).toBe(401);
    expect((await follow('', { 'public-host': 'localhost', 'public-host-key': 'wrong' })).status).toBe(401);
    expect((await anvil.admin('/anvil/api/nobody/logs')).status).toBe(404);
    for (const [query, word] of [
      ['?status=5', 'status'],
      ['?follow=yes', 'follow'],
      ['?limit=0', 'limit'],
      ['?follow=1&limit=5', 'limit'],
      ['?grep=x', 'unknown parameter "grep"'],
    ] as const) {
      const reply = await anvil.admin(`/anvil/api/logger/logs${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.json().error).toContain(word);
    }
  });
});

describe('GET /anvil/api/<key>/logs (no follow)', () => {
  it('answers the last lines as JSON, oldest first, filtered', async () => {
    for (let i = 0; i < 3; i++) await anvil.request(`/logger/hit/recent-${i}`);
    await anvil.request('/logger/fail');
    const last = await waitFor(
      async () => {
        const reply = await anvil.admin('/anvil/api/logger/logs?limit=4');
        const lines = reply.json().lines as Array<Record<string, any>>;
        return lines.at(-1)?.path === '/fail' ? lines : null;
      },
      { what: 'the newest lines in the log' },
    );
    expect(last.map((l) => l.path)).toEqual(['/hit/recent-0', '/hit/recent-1', '/hit/recent-2', '/fail']);
    const failures = (await anvil.admin('/anvil/api/logger/logs?status=503')).json().lines as Array<
      Record<string, any>
    >;
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(failures.every((l) => l.status === 503)).toBe(true);
    const texts = (await anvil.admin('/anvil/api/logger/logs?text=RECENT-1')).json().lines as Array<
      Record<string, any>
    >;
    expect(texts.map((l) => l.path)).toEqual(['/hit/recent-1']);
  });
});

describe('draining with followers', () => {
  it('ends the live streams: a follower does not hold the drain', async () => {
    const follower = await follow();
    expect(follower.status).toBe(200);
    expect(await anvil.stop()).toBe(0);
    await follower.ended;
  });
});
