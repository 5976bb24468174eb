import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleApis } from '../helpers/example-apis.js';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

// The real apis/ folder's examples that run offline, in-process (helpers/in-process-apis.ts):
// dynamic (Concat + Pull over the bus with queryParams), limited (RateLimit minuteIp 30), orders
// and the others. That `npm start` deploys and publishes them all, and reports' job, are
// test/http/examples.test.ts's.

const apis = exampleApis();

let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({ apis });
});
afterAll(async () => anvil?.dispose());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the example APIs of apis/', () => {
  it('dynamic builds a path from its parameter and calls greeter and users over the bus', async () => {
    const reply = await anvil.request('/dynamic/greet/Ann');
    expect(reply.status, reply.text).toBe(200);
    const body = reply.json();
    expect(body).toMatchObject({ name: 'Ann', greeting: 'Hi (dev), Ann!', total: 2, limit: 20, offset: 0 });
    expect(body.users.map((u: { name: string }) => u.name)).toEqual(['Ada Lovelace', 'Grace Hopper']);

    // queryParams: our query string, passed on to the users API.
    const page = await anvil.request('/dynamic/greet/Bob?limit=1&offset=1');
    expect(page.status, page.text).toBe(200);
    expect(page.json()).toMatchObject({ name: 'Bob', greeting: 'Hi (dev), Bob!', total: 2, limit: 1, offset: 1 });
    expect(page.json().users.map((u: { name: string }) => u.name)).toEqual(['Grace Hopper']);

    // An error of the called API (400 for limit=abc) is a 502 here (Pull verifies by default).
    expect((await anvil.request('/dynamic/greet/Ann?limit=abc')).status).toBe(502);
  });

  it('limited answers 30 times a minute per client IP, then 429 with retry-after', async () => {
    // Thirty-one calls must fall in one clock minute: a real-time wait, only when the minute (the
    // rate limit's window) ends within 5 s, until just after it does.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 5_000) await sleep(left + 250);
    for (let i = 1; i <= 30; i++) {
      const reply = await anvil.request('/limited/hello');
      expect(reply.status, reply.text).toBe(200);
      expect(reply.json()).toEqual({
        message: 'Hello! You may call this endpoint 30 times a minute.',
        remainingThisMinute: String(30 - i),
      });
      expect(reply.headers['ratelimit-limit']).toBe('30');
      expect(reply.headers['ratelimit-remaining']).toBe(String(30 - i));
    }
    const over = await anvil.request('/limited/hello');
    expect(over.status).toBe(429);
    expect(over.json()).toEqual({ error: 'Too Many Requests' });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(over.headers['ratelimit-remaining']).toBe('0');
  });

  it('orders checks the body with a model, takes the stock in a transaction (rolled back when short) and remembers the last order with RedisSet', async () => {
    const post = (body: unknown) =>
      anvil.request('/orders', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
    const stock = async () =>
      (await anvil.request('/orders/products')).json().products.find((p: { id: number }) => p.id === 1).stock;
    expect(await stock()).toBe(5);
    const taken = await post({ product: 1, quantity: 2, note: 'first' });
    expect(taken.status, taken.text).toBe(201);
    const { id } = taken.json();
    expect((await anvil.request(`/orders/${id}`)).json()).toEqual({ id, product: 1, quantity: 2, note: 'first' });
    expect((await anvil.request('/orders/last')).json()).toEqual({ last: { id, product: 1, quantity: 2 } });

    const invalid = await post({ product: 1, quantity: 'two' });
    expect(invalid.status).toBe(400);
    expect(invalid.json().error).toBe('order/quantity must be integer');

    // Short of stock: the order row written before the stock check is rolled back with it.
    const short = await post({ product: 1, quantity: 4 });
    expect(short.status).toBe(409);
    expect(await stock()).toBe(3);
    expect((await anvil.request(`/orders/${id + 1}`)).status).toBe(404);
    expect((await anvil.request('/orders/last')).json().last.id).toBe(id);
  });

  it('the other offline examples still answer', async () => {
    expect((await anvil.request('/ping/ping')).json()).toEqual({ message: 'pong' });
    expect((await anvil.request('/greeter/hello/Ann')).json()).toMatchObject({ greeting: 'Hi (dev), Ann!' });
    expect((await anvil.request('/users')).status).toBe(200);
  });
});
