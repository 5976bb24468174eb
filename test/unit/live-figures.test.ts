import { describe, expect, it } from 'vitest';
import { LiveFigures } from '../../src/front/meters/live-figures.js';
import { apiWindow, routeWindows, secondSeries } from '../../src/front/meters/live-windows.js';

// The rolling windows behind GET /anvil/overview and /anvil/api/<key>/stats, on a clock the test
// steps by hand: what ages out of the last minute and the last five, and what the series shows.

const T0 = 1_764_000_000; // a whole second, unix time

function figures(): { live: LiveFigures; at(second: number): void } {
  let now = T0 * 1000;
  return { live: new LiveFigures(() => now), at: (second) => (now = (T0 + second) * 1000) };
}

describe('LiveFigures', () => {
  it('keeps a request in the 1-minute window for 60 s and in the 5-minute one for 300 s', () => {
    const { live, at } = figures();
    live.request('h', 'a', 'get /x', 200, 0.002);
    at(30);
    live.request('h', 'a', 'get /x', 503, 0.004);
    live.request('h', 'a', 'get /y', 429, 0.001);

    const window = (seconds: number) => apiWindow(live.of('h', 'a'), live.now(), seconds, seconds);
    at(59);
    expect(window(60)).toMatchObject({ requests: 3, errors: 1, rateLimited: 1 });
    at(60);
    expect(window(60)).toMatchObject({ requests: 2, errors: 1, rateLimited: 1, errorRate: 0.5 });
    expect(window(300)).toMatchObject({ requests: 3 });
    at(299);
    expect(window(300).requests).toBe(3);
    at(300);
    expect(window(300).requests).toBe(2);
    at(400);
    expect(window(300)).toMatchObject({ requests: 0, errorRate: 0, p50Ms: null });
  });

  it('estimates percentiles in ms from the latency buckets, and rates per second over the window', () => {
    const { live } = figures();
    for (let i = 0; i < 99; i++) live.request('h', 'a', 'get /x', 200, 0.0008); // the (0.5 ms, 1 ms] bucket
    live.request('h', 'a', 'get /x', 200, 0.2); // (100 ms, 250 ms]
    const minute = apiWindow(live.of('h', 'a'), live.now(), 60, 60);
    expect(minute.requests).toBe(100);
    expect(minute.perSecond).toBeCloseTo(100 / 60, 3);
    expect(minute.p50Ms).toBeGreaterThan(0.5);
    expect(minute.p50Ms).toBeLessThanOrEqual(1);
    expect(minute.p99Ms).toBeLessThanOrEqual(1);
  });

  it('counts per route template, busiest first', () => {
    const { live, at } = figures();
    live.request('h', 'a', 'get /x', 200, 0.001);
    for (let i = 0; i < 3; i++) live.request('h', 'a', 'get /y', 500, 0.001);
    at(7);
    const routes = routeWindows(live.of('h', 'a'), live.now(), 60, 60);
    expect(routes.map((r) => [r.route, r.requests, r.errors])).toEqual([
      ['get /y', 3, 3],
      ['get /x', 1, 0],
    ]);
  });

  it('gives one point per second of the last five minutes, oldest first', () => {
    const { live, at } = figures();
    live.request('h', 'a', 'get /x', 200, 0.001);
    at(2);
    live.request('h', 'a', 'get /x', 500, 0.001);
    live.request('h', 'a', 'get /x', 429, 0.001);
    at(3);
    const series = secondSeries(live.of('h', 'a'), live.now());
    expect(series.t).toHaveLength(300);
    expect(series.t.at(-1)).toBe(T0 + 3);
    expect(series.requests.slice(-4)).toEqual([1, 0, 2, 0]);
    expect(series.errors.slice(-4)).toEqual([0, 0, 1, 0]);
    expect(series.rateLimited.slice(-4)).toEqual([0, 0, 1, 0]);
    expect(series.p50Ms.slice(-4).map((v) => v === null)).toEqual([false, true, false, true]);
    // A slot the clock came back to after 300 s holds the new second only.
    at(302);
    live.request('h', 'a', 'get /x', 200, 0.001);
    expect(secondSeries(live.of('h', 'a'), live.now()).requests.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('adds what threads report, sandbox breaches and failed jobs; forgets an API idle for five minutes', () => {
    const { live, at } = figures();
    live.requests('h', 'a', 'get /x', 200, 5, [0, 5]);
    live.sandboxBreaches('h', 'a', 2);
    live.jobFailed('h', 'a');
    expect(apiWindow(live.of('h', 'a'), live.now(), 60, 60)).toMatchObject({
      requests: 5,
      sandboxBreaches: 2,
      jobsFailed: 1,
    });
    at(301);
    live.sweep();
    expect(live.of('h', 'a')).toBeUndefined();
  });
});
