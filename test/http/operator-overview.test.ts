import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { tarGz } from '../helpers/tarball.js';

// Issue 26: the operator JSON on the admin host (GET /anvil/overview, GET /anvil/api/<key>/stats)
// from the router's rolling windows, and the metrics behind the console.

// 200 ms of CPU per call (the default is 50 ms): the /burn call's latency stands out from the rest.
const SHOP = (greeting: string) => `key: shop
limits: { cpuMs: 200 }
endpoints:
  get /ok:
    Reply: { directive: ModifyMessage, body: { greeting: ${greeting} } }
  get /items/{id}:
    Reply: { directive: ModifyMessage, body: { id: $.message.pathParam.id } }
  get /boom:
    Fail: { directive: ThrowError, status: 500, message: broken for the test }
  get /limited:
    Limit: { directive: RateLimit, minuteTotal: 1 }
    Ping: { directive: Ping }
  get /burn:
    Burn: { directive: Burn }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;
const BURN = 'export default function () {\n  for (;;) {}\n}\n';
const QUIET = 'key: quiet\nendpoints:\n  get /ok:\n    Ping: { directive: Ping }\n';

let anvil: TestInstance;
beforeAll(async () => {
  anvil = await startInstance({
    apis: { shop: { 'api.yaml': SHOP('hello'), 'Directives/Burn.js': BURN }, quiet: { 'api.yaml': QUIET } },
    args: ['--max-directive-cpu', '200ms', '--request-timeout', '5s'],
  });
});
afterAll(async () => anvil?.dispose());

type Figures = {
  requests: number;
  perSecond: number;
  errors: number;
  errorRate: number;
  rateLimited: number;
  p50Ms: number | null;
  p99Ms: number | null;
  sandboxBreaches: number;
  jobsFailed: number;
};

describe('GET /anvil/overview and /anvil/api/<key>/stats', () => {
  it('refuses a caller without the admin credentials, as the management API does', async () => {
    for (const path of ['/anvil/overview', '/anvil/api/shop/stats']) {
      expect((await anvil.request(path, { host: 'admin.localhost' })).status).toBe(401);
      expect(
        (
          await anvil.request(path, {
            host: 'admin.localhost',
            headers: { 'public-host': 'localhost', 'public-host-key': 'wrong' },
          })
        ).status,
      ).toBe(401);
      // Not on a public host: there it is an API path like any other (no API "anvil").
      expect((await anvil.request(path)).status).toBe(404);
    }
  });

  it('shows what the requests did: counts, error rate, 429s, sandbox breaches, latency, release and status', async () => {
    for (let i = 0; i < 6; i++) expect((await anvil.request('/shop/ok')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await anvil.request(`/shop/items/${i}`)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await anvil.request('/shop/boom')).status).toBe(500);
    expect((await anvil.request('/shop/limited')).status).toBe(200);
    expect((await anvil.request('/shop/limited')).status).toBe(429);
    expect((await anvil.request('/shop/burn')).status).toBeGreaterThanOrEqual(500);
    const record = (await anvil.admin('/anvil/api/shop')).json();

    // Sandbox breaches come with the thread's next report (every 2 s).
    const body = await eventually(async () => {
      const reply = await anvil.admin('/anvil/overview');
      expect(reply.status).toBe(200);
      const json = reply.json();
      return json.apis.find((a: { key: string }) => a.key === 'shop').last1m.sandboxBreaches >= 1 ? json : null;
    }, 15_000);
    expect(body.instance.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(body.instance.uptimeSeconds).toBeGreaterThanOrEqual(0);
    expect(body.instance.cells).toBeGreaterThanOrEqual(1);
    expect(body.instance.threads).toBeGreaterThanOrEqual(1);
    expect(body.host).toBe('localhost');

    const shop = body.apis.find((a: { key: string }) => a.key === 'shop');
    expect(shop).toMatchObject({
      key: 'shop',
      host: 'localhost',
      release: record.release,
      status: 'public',
      active: true,
      public: true,
      pausedUntil: null,
      jobs: { waiting: 0, failed: 0 },
    });
    expect(shop.threads).toBeGreaterThanOrEqual(1);
    const minute: Figures = shop.last1m;
    // 6 + 3 + 2 + 2 + 1 requests, of which the two /boom and the /burn ended >= 500.
    expect(minute.requests).toBe(14);
    expect(minute.errors).toBe(3);
    expect(minute.errorRate).toBeCloseTo(3 / 14, 3);
    expect(minute.rateLimited).toBe(1);
    expect(minute.sandboxBreaches).toBe(1);
    expect(minute.jobsFailed).toBe(0);
    expect(minute.perSecond).toBeGreaterThan(0);
    expect(minute.p50Ms).toBeGreaterThan(0);
    expect(minute.p99Ms).toBeGreaterThanOrEqual(minute.p50Ms!);
    // The /burn call ran 200 ms of CPU before it was cut: the p99 shows it.
    expect(minute.p99Ms).toBeGreaterThan(100);
    expect(shop.last5m.requests).toBe(14);

    // An API never called is listed, with empty windows.
    const quiet = body.apis.find((a: { key: string }) => a.key === 'quiet');
    expect(quiet).toMatchObject({
      status: 'public',
      threads: 0,
      last1m: { requests: 0, errorRate: 0, p50Ms: null, p99Ms: null },
    });
    expect(body.totals).toMatchObject({
      apis: 2,
      public: 2,
      paused: 0,
      disabled: 0,
      last1m: { requests: 14, errors: 3, rateLimited: 1, sandboxBreaches: 1 },
    });
  });

  it('gives per route template figures and a 1-second series of the last five minutes', async () => {
    const reply = await anvil.admin('/anvil/api/shop/stats?window=5m');
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-store');
    const stats = reply.json();
    expect(stats).toMatchObject({ key: 'shop', host: 'localhost', window: '5m', windowSeconds: 300 });
    const route = (name: string): Figures & { route: string } =>
      stats.routes.find((r: { route: string }) => r.route === name);
    expect(route('get /ok')).toMatchObject({ requests: 6, errors: 0, rateLimited: 0 });
    expect(route('get /items/{id}')).toMatchObject({ requests: 3, errors: 0 });
    expect(route('get /boom')).toMatchObject({ requests: 2, errors: 2, errorRate: 1 });
    expect(route('get /limited')).toMatchObject({ requests: 2, rateLimited: 1 });
    // Templates, never raw paths.
    expect(JSON.stringify(stats.routes)).not.toContain('/items/1');

    const { series } = stats;
    expect(series.stepSeconds).toBe(1);
    expect(series.t).toHaveLength(300);
    for (const column of ['requests', 'errors', 'rateLimited', 'p50Ms', 'p99Ms'])
      expect(series[column]).toHaveLength(300);
    expect(series.t[299] - series.t[0]).toBe(299);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    expect(sum(series.requests)).toBe(stats.totals.requests);
    expect(sum(series.errors)).toBe(3);
    expect(sum(series.rateLimited)).toBe(1);
    const busy = series.requests.findIndex((n: number) => n > 0);
    expect(series.p50Ms[busy]).toBeGreaterThan(0);
    expect(series.p50Ms[0] === null || series.requests[0] > 0).toBe(true);

    // The default window is the last minute.
    expect((await anvil.admin('/anvil/api/shop/stats')).json()).toMatchObject({ window: '1m', windowSeconds: 60 });
  });

  it('answers 404 for an unknown API and 400 naming the allowed windows', async () => {
    const unknown = await anvil.admin('/anvil/api/nosuch/stats');
    expect(unknown.status).toBe(404);
    expect(unknown.json().error).toContain('unknown API "nosuch"');
    const bad = await anvil.admin('/anvil/api/shop/stats?window=1h');
    expect(bad.status).toBe(400);
    expect(bad.json()).toEqual({ error: 'window must be one of 1m, 5m, got "1h"', code: 'ANVIL_ERR_BAD_QUERY' });
    expect((await anvil.admin('/anvil/overview', { method: 'POST', body: '{}' })).status).toBe(405);
  });

  it('shows a rollback: the release answering, the status, and the release changes counted', async () => {
    const first = (await anvil.admin('/anvil/api/shop')).json().release as string;
    const deployed = await anvil.admin('/anvil/api', {
      method: 'POST',
      body: tarGz({ 'api.yaml': SHOP('hi again'), 'Directives/Burn.js': BURN }),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(deployed.status).toBe(201);
    const second = deployed.json().release as string;
    const put = (release: string, active = true) =>
      anvil.admin('/anvil/api/shop', {
        method: 'PUT',
        body: JSON.stringify({ active, release, public: true }),
        headers: { 'content-type': 'application/json' },
      });
    expect((await put(second)).status).toBe(204);
    expect((await anvil.request('/shop/ok')).json()).toEqual({ greeting: 'hi again' });
    const overviewRelease = async () =>
      (await anvil.admin('/anvil/overview')).json().apis.find((a: { key: string }) => a.key === 'shop');
    expect(await overviewRelease()).toMatchObject({ release: second, status: 'public' });

    expect((await put(first)).status).toBe(204);
    expect((await anvil.request('/shop/ok')).json()).toEqual({ greeting: 'hello' });
    expect(await overviewRelease()).toMatchObject({ release: first, status: 'public' });
    expect((await anvil.admin('/anvil/api/shop/stats')).json().release).toBe(first);
    expect((await put('r-20200101-000000000-0000')).status).toBe(404);

    const quiet = (await anvil.admin('/anvil/api/quiet')).json().release as string;
    const disable = await anvil.admin('/anvil/api/quiet', {
      method: 'PUT',
      body: JSON.stringify({ active: false, release: quiet, public: true }),
      headers: { 'content-type': 'application/json' },
    });
    expect(disable.status).toBe(204);
    expect(
      (await anvil.admin('/anvil/overview')).json().apis.find((a: { key: string }) => a.key === 'quiet').status,
    ).toBe('disabled');

    const text = await scrapeMetrics(anvil);
    const changes = (api: string, change: string, result: string) =>
      sample(text, 'anvil_release_changes_total', { host: 'localhost', api, change, result });
    expect(changes('shop', 'publish', 'ok')).toBe(1); // a newer release, active and public (releaseChange)
    expect(changes('shop', 'rollback', 'ok')).toBe(1);
    expect(changes('shop', 'rollback', 'unknown_release')).toBe(1);
    expect(changes('quiet', 'disable', 'ok')).toBe(1);
    const ghost = await anvil.admin('/anvil/api/ghost', {
      method: 'PUT',
      body: JSON.stringify({ active: true, release: first, public: true }),
      headers: { 'content-type': 'application/json' },
    });
    expect(ghost.status).toBe(404);
    const afterGhost = await scrapeMetrics(anvil);
    expect(
      sample(afterGhost, 'anvil_release_changes_total', {
        host: 'localhost',
        api: '(unknown)',
        change: 'update',
        result: 'unknown_api',
      }),
    ).toBe(1);
    expect(afterGhost).not.toContain('api="ghost"');
    expect(sample(text, 'anvil_deploys_total', { host: 'localhost', result: 'ok' })).toBe(1);
    const refused = await anvil.admin('/anvil/api', {
      method: 'POST',
      body: tarGz({ 'api.yaml': 'key: broken\nendpoints: 12\n' }),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(refused.status).toBe(400);
    expect(sample(await scrapeMetrics(anvil), 'anvil_deploys_total', { host: 'localhost', result: 'invalid' })).toBe(1);
  });

  it('exports status classes, sandbox breaches by kind, and the router and cell processes in /anvil/metrics', async () => {
    const text = await eventually(async () => {
      const t = await scrapeMetrics(anvil);
      return t.includes('anvil_cell_resident_memory_bytes{') ? t : null;
    }, 15_000);
    expect(
      sample(text, 'anvil_requests_total', { host: 'localhost', api: 'shop', route: 'get /boom', class: '5xx' }),
    ).toBe(2);
    expect(
      sample(text, 'anvil_requests_total', { host: 'localhost', api: 'shop', route: 'get /limited', class: '4xx' }),
    ).toBe(1);
    expect(sample(text, 'anvil_sandbox_breaches_total', { host: 'localhost', api: 'shop', kind: 'cpu' })).toBe(1);
    // The router's own process (prom-client's default metrics) and its event-loop lag.
    expect(sample(text, 'process_resident_memory_bytes', {})).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_eventloop_lag_seconds', {})).toBeGreaterThanOrEqual(0);
    expect(text).toContain('nodejs_eventloop_lag_p99_seconds ');
    const cell = /^anvil_cell_resident_memory_bytes\{cell="(\d+)"\}/m.exec(text)![1]!;
    expect(sample(text, 'anvil_cell_resident_memory_bytes', { cell })).toBeGreaterThan(0);
    expect(sample(text, 'anvil_cell_cpu_seconds_total', { cell })).toBeGreaterThan(0);
    expect(sample(text, 'anvil_cell_heap_used_bytes', { cell })).toBeGreaterThan(0);
    expect(sample(text, 'anvil_cell_event_loop_lag_seconds', { cell })).toBeGreaterThanOrEqual(0);
    expect(text).toContain('# TYPE anvil_job_runs_total counter');
    expect(text).toContain('# TYPE anvil_outgoing_request_duration_seconds histogram');
  });
});
