import { afterEach, describe, expect, it } from 'vitest';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { getFrom, PARTIAL_HEAD, rawConnection, type RawConnection } from '../helpers/loopback-clients.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { waitFor, waitForStarted } from '../helpers/wait-for.js';

// Issue 41, case 4: half-open connections (a request head never finished) from one client took the
// router's file descriptors until a neighbour's new connections failed. The router now holds at most
// --max-connections client connections, and --max-connections-per-client from one address; at the
// total, an idle or half-open connection of the address holding the most makes room for a new one.
// The attackers connect from 127.0.0.3 and .4, the neighbour from 127.0.0.2, the metrics from 127.0.0.1.

const API = {
  'api.yaml': `key: ping
endpoints:
  get /ping:
    Pong: { directive: Ping }
  get /wait/{ms}:
    Started: { directive: Log }
    Wait: { directive: Delay, ms: $.message.pathParam.ms }
    Pong: { directive: Ping }
`,
};

const running: TestInstance[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.dispose()));
});

async function start(args: string[]): Promise<TestInstance> {
  const anvil = await startInstance({ apis: { ping: API }, args });
  running.push(anvil);
  return anvil;
}

const metric = async (anvil: TestInstance, name: string, labels: Record<string, string> = {}) => sample(await scrapeMetrics(anvil), name, labels) ?? 0;

function openMany(port: number, localAddress: string, count: number, payload = PARTIAL_HEAD): Promise<RawConnection[]> {
  return Promise.all(Array.from({ length: count }, () => rawConnection(port, localAddress, payload)));
}

describe('connection bounds', () => {
  it('refuses with 429 a connection over --max-connections-per-client from one address, and none of another address', async () => {
    const anvil = await start(['--max-connections', '100', '--max-connections-per-client', '5']);
    const attacker = await openMany(anvil.port, '127.0.0.3', 6);
    // One of the six (whichever the router took last) is answered and closed; five stay open.
    await waitFor(() => attacker.some((c) => c.isClosed()), { what: 'one of the six connections closed', timeoutMs: 30_000 });
    const refused = attacker.filter((c) => c.isClosed());
    expect(refused).toHaveLength(1);
    expect(refused[0]!.received()).toMatch(/^HTTP\/1\.1 429 /);
    expect(refused[0]!.received()).toContain('this client address already has 5 connections open, the limit per client (--max-connections-per-client)');
    expect(await getFrom(anvil.port, '/ping/ping', '127.0.0.2')).toMatchObject({ status: 200 });
    expect(await metric(anvil, 'anvil_http_connections_refused_total', { reason: 'per_client' })).toBe(1);
    expect(await metric(anvil, 'anvil_http_connections_open')).toBeGreaterThanOrEqual(5);
    for (const c of attacker) c.socket.destroy();
  }, 60_000);

  it('at --max-connections, closes a half-open connection of the address holding the most to take a neighbour\'s', async () => {
    const anvil = await start(['--max-connections', '12', '--max-connections-per-client', '8']);
    // The scrape's own connection (kept alive) is the only one before the attack.
    const before = await metric(anvil, 'anvil_http_connections_open');
    const big = await openMany(anvil.port, '127.0.0.3', 8);
    const small = await openMany(anvil.port, '127.0.0.4', 3);
    await waitFor(async () => (await metric(anvil, 'anvil_http_connections_open')) === before + 11, { what: 'the eleven half-open connections held', timeoutMs: 30_000 });
    // The router is full (12); each new connection of the neighbour takes the place of one of .3's.
    for (let i = 0; i < 3; i++) expect(await getFrom(anvil.port, '/ping/ping', '127.0.0.2')).toMatchObject({ status: 200 });
    await waitFor(() => big.some((c) => c.isClosed()), { what: 'a half-open connection of 127.0.0.3 closed', timeoutMs: 30_000 });
    expect(small.every((c) => !c.isClosed())).toBe(true);
    // Closed without an answer: it never sent a whole request.
    expect(big.filter((c) => c.isClosed()).every((c) => c.received() === '')).toBe(true);
    expect(await metric(anvil, 'anvil_http_connections_evicted_total', { state: 'half_open' })).toBeGreaterThanOrEqual(1);
    expect(await metric(anvil, 'anvil_http_connections_open')).toBeLessThanOrEqual(12);
    for (const c of [...big, ...small]) c.socket.destroy();
  }, 60_000);

  it('refuses a new connection with 503 when every connection has a request in flight', async () => {
    const anvil = await start(['--max-connections', '3', '--max-connections-per-client', '3', '--drain-timeout', '1s']);
    // The API's thread is started first (a cold start on a loaded machine can take seconds).
    expect(await getFrom(anvil.port, '/ping/ping', '127.0.0.4')).toMatchObject({ status: 200 });
    // One after the other: a connection whose head has not come yet is half-open, and the next
    // one would take its place.
    const busy: RawConnection[] = [];
    for (let i = 1; i <= 3; i++) {
      busy.push(await rawConnection(anvil.port, '127.0.0.3', 'GET /ping/wait/20000 HTTP/1.1\r\nHost: localhost\r\n\r\n'));
      await waitForStarted(anvil, 'ping', (l) => l.route === 'get /wait/{ms}', { what: 'the slow requests', count: i, timeoutMs: 30_000 });
    }
    const refused = await rawConnection(anvil.port, '127.0.0.2', 'GET /ping/ping HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await refused.closed;
    expect(refused.received()).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.received()).toContain('retry-after: 1');
    expect(refused.received()).toContain('the instance holds 3 connections, its limit (--max-connections), each with a request in flight');
    expect(busy.every((c) => !c.isClosed())).toBe(true);
    for (const c of busy) c.socket.destroy();
    await waitFor(async () => (await metric(anvil, 'anvil_http_connections_refused_total', { reason: 'total' })) === 1, { what: 'the refusal counted', timeoutMs: 30_000 });
  }, 90_000);
});
