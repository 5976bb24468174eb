import { afterEach, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import {
  getFrom,
  HELD_REQUESTS_API,
  PARTIAL_HEAD,
  rawConnection,
  type RawConnection,
} from '../helpers/loopback-clients.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { waitFor, waitForStarted } from '../helpers/wait-for.js';

// Issue 41, case 4: half-open connections (a request head never finished) from one client took the
// router's file descriptors until a neighbour's new connections failed. The router now holds at most
// --max-connections client connections, and --max-connections-per-client from one address; at the
// total, an idle or half-open connection of the address holding the most makes room for a new one.
// A connection whose request body is still arriving is as evictable as a half-open one (a body sent
// a byte a second held a connection "busy" for 30 s); when none is evictable, the client holding at
// least two more connections than the newcomer's loses its oldest; an IPv6 client is its /64.
// The attackers connect from 127.0.0.3 and .4, the neighbour from 127.0.0.2, the metrics from 127.0.0.1.

const API = HELD_REQUESTS_API;

const running: TestInstance[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.dispose()));
});

async function start(args: string[]): Promise<TestInstance> {
  const anvil = await startInstance({ apis: { ping: API }, args });
  running.push(anvil);
  return anvil;
}

const metric = async (anvil: TestInstance, name: string, labels: Record<string, string> = {}) =>
  sample(await scrapeMetrics(anvil), name, labels) ?? 0;

function openMany(port: number, localAddress: string, count: number, payload = PARTIAL_HEAD): Promise<RawConnection[]> {
  return Promise.all(Array.from({ length: count }, () => rawConnection(port, localAddress, payload)));
}

/** One 20 s request in flight per address given, opened one after the other (a connection whose head has not come yet is half-open, and the next one would take its place). */
async function busyConnections(anvil: TestInstance, addresses: string[]): Promise<RawConnection[]> {
  const busy: RawConnection[] = [];
  for (const address of addresses) {
    busy.push(await rawConnection(anvil.port, address, 'GET /ping/wait/20000 HTTP/1.1\r\nHost: localhost\r\n\r\n'));
    await waitForStarted(anvil, 'ping', (l) => l.route === 'get /wait/{ms}', {
      what: 'the slow requests',
      count: busy.length,
      timeoutMs: 30_000,
    });
  }
  return busy;
}

describe('connection bounds', () => {
  it('refuses with 429 a connection over --max-connections-per-client from one address, and none of another address', async () => {
    const anvil = await start(['--max-connections', '100', '--max-connections-per-client', '5']);
    const attacker = await openMany(anvil.port, '127.0.0.3', 6);
    // One of the six (whichever the router took last) is answered and closed; five stay open.
    await waitFor(() => attacker.some((c) => c.isClosed()), {
      what: 'one of the six connections closed',
      timeoutMs: 30_000,
    });
    const refused = attacker.filter((c) => c.isClosed());
    expect(refused).toHaveLength(1);
    expect(refused[0]!.received()).toMatch(/^HTTP\/1\.1 429 /);
    expect(refused[0]!.received()).toContain(
      'this client address already has 5 connections open, the limit per client (--max-connections-per-client)',
    );
    expect(await getFrom(anvil.port, '/ping/ping', '127.0.0.2')).toMatchObject({ status: 200 });
    expect(await metric(anvil, 'anvil_http_connections_refused_total', { reason: 'per_client' })).toBe(1);
    expect(await metric(anvil, 'anvil_http_connections_open')).toBeGreaterThanOrEqual(5);
    for (const c of attacker) c.socket.destroy();
  }, 60_000);

  it("at --max-connections, closes a half-open connection of the address holding the most to take a neighbour's", async () => {
    const anvil = await start(['--max-connections', '12', '--max-connections-per-client', '8']);
    // The scrape's own connection (kept alive) is the only one before the attack.
    const before = await metric(anvil, 'anvil_http_connections_open');
    const big = await openMany(anvil.port, '127.0.0.3', 8);
    const small = await openMany(anvil.port, '127.0.0.4', 3);
    await waitFor(async () => (await metric(anvil, 'anvil_http_connections_open')) === before + 11, {
      what: 'the eleven half-open connections held',
      timeoutMs: 30_000,
    });
    // The router is full (12); each new connection of the neighbour takes the place of one of .3's.
    for (let i = 0; i < 3; i++)
      expect(await getFrom(anvil.port, '/ping/ping', '127.0.0.2')).toMatchObject({ status: 200 });
    await waitFor(() => big.some((c) => c.isClosed()), {
      what: 'a half-open connection of 127.0.0.3 closed',
      timeoutMs: 30_000,
    });
    expect(small.every((c) => !c.isClosed())).toBe(true);
    // Closed without an answer: it never sent a whole request.
    expect(big.filter((c) => c.isClosed()).every((c) => c.received() === '')).toBe(true);
    expect(await metric(anvil, 'anvil_http_connections_evicted_total', { state: 'half_open' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(await metric(anvil, 'anvil_http_connections_open')).toBeLessThanOrEqual(12);
    for (const c of [...big, ...small]) c.socket.destroy();
  }, 60_000);

  it("at --max-connections, closes a connection whose request body is still arriving to take a neighbour's", async () => {
    const anvil = await start(['--max-connections', '5', '--max-connections-per-client', '8']);
    // Each head asks for 100-continue: node answers it when the head is complete, just before it
    // emits 'request', so "100 Continue" received means the request has started. Then one byte of
    // the 1000 announced, and no more.
    const head =
      'POST /ping/upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n';
    const slow = await openMany(anvil.port, '127.0.0.3', 5, head);
    await waitFor(() => slow.every((c) => c.received().startsWith('HTTP/1.1 100 Continue')), {
      what: 'the five requests started',
      timeoutMs: 30_000,
    });
    for (const c of slow) c.socket.write('x');
    // The router is full of requests still receiving their body: the neighbour takes one's place.
    expect(await getFrom(anvil.port, '/ping/ping', '127.0.0.2')).toMatchObject({ status: 200 });
    await waitFor(() => slow.some((c) => c.isClosed()), { what: 'a slow-body connection closed', timeoutMs: 30_000 });
    // Closed without a final answer: its request was never received in full.
    expect(slow.filter((c) => c.isClosed()).every((c) => !/HTTP\/1\.1 [2-5]\d\d /.test(c.received()))).toBe(true);
    expect(await metric(anvil, 'anvil_http_connections_evicted_total', { state: 'receiving' })).toBeGreaterThanOrEqual(
      1,
    );
    for (const c of slow) c.socket.destroy();
  }, 60_000);

  it("when every connection has a request in flight, closes the oldest of the client holding the most to take a neighbour's", async () => {
    const anvil = await start(['--max-connections', '3', '--max-connections-per-client', '3', '--drain-timeout', '1s']);
    expect(await getFrom(anvil.port, '/ping/ping', '127.0.0.5')).toMatchObject({ status: 200 });
    const busy = await busyConnections(anvil, ['127.0.0.3', '127.0.0.3', '127.0.0.4']);
    // .3 holds two, the neighbour's address none: .3's oldest makes room.
    expect(await getFrom(anvil.port, '/ping/ping', '127.0.0.2')).toMatchObject({ status: 200 });
    await waitFor(() => busy[0]!.isClosed(), { what: 'the oldest connection of 127.0.0.3 closed', timeoutMs: 30_000 });
    expect(busy[0]!.received()).toBe('');
    expect(busy.slice(1).every((c) => !c.isClosed())).toBe(true);
    expect(await metric(anvil, 'anvil_http_connections_evicted_total', { state: 'busy' })).toBe(1);
    for (const c of busy) c.socket.destroy();
  }, 90_000);

  it("refuses a new connection with 503 when every connection has a request in flight and no client holds two more than the newcomer's", async () => {
    const anvil = await start(['--max-connections', '3', '--max-connections-per-client', '3', '--drain-timeout', '1s']);
    // The API's thread is started first (a cold start on a loaded machine can take seconds).
    expect(await getFrom(anvil.port, '/ping/ping', '127.0.0.5')).toMatchObject({ status: 200 });
    const busy = await busyConnections(anvil, ['127.0.0.3', '127.0.0.4', '127.0.0.6']);
    const refused = await rawConnection(anvil.port, '127.0.0.2', 'GET /ping/ping HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await refused.closed;
    expect(refused.received()).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.received()).toContain('retry-after: 1');
    expect(refused.received()).toContain(
      'the instance holds 3 connections, its limit (--max-connections), each with a request in flight',
    );
    expect(busy.every((c) => !c.isClosed())).toBe(true);
    for (const c of busy) c.socket.destroy();
    // A scrape sent while the slow requests still hold every connection is refused (and counted) too.
    await waitFor(async () => (await metric(anvil, 'anvil_http_connections_refused_total', { reason: 'total' })) >= 1, {
      what: 'the refusal counted',
      timeoutMs: 30_000,
    });
  }, 90_000);
});
