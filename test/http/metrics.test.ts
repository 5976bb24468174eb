import { networkInterfaces } from 'node:os';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { waitFor } from '../helpers/wait-for.js';

// GET /anvil/metrics (SPEC §6, issue 7): per API and route template, request counts by status
// class, latency, errors, rate-limit rejections; mailbox, threads and isolate heap per API; the CPU
// of custom directive calls.

const API = `key: meter
endpoints:
  get /ok:
    Ping: { directive: Ping }
  get /users/{id}:
    Reply: { directive: ModifyMessage, body: { id: $.message.pathParam.id } }
  get /boom:
    Fail: { directive: ThrowError, status: 503, message: down for the test }
  get /limited:
    Limit: { directive: RateLimit, minuteTotal: 1 }
    Ping: { directive: Ping }
  get /slow:
    Wait: { directive: Delay, ms: 8000 }
  get /custom:
    Echo: { directive: Echo }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

const ECHO = `export default (state) => {
  const items = [];
  for (let i = 0; i < 1000; i++) items.push({ i, text: 'x'.repeat(20) });
  state.message.body = { items: items.length };
};
`;

let anvil: TestInstance;
beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      meter: { 'api.yaml': API, 'Directives/Echo.js': ECHO },
      quiet: { 'api.yaml': 'key: quiet\nendpoints:\n  get /ok:\n    Ping: { directive: Ping }\n' },
    },
    // Long enough for a first request that starts the API's thread while other test files load the
    // machine (1 s was not, in CI), short enough for /slow to end in the router's 504.
    args: ['--request-timeout', '4s'],
  });
});
afterAll(async () => anvil?.dispose());

async function scrape(): Promise<string> {
  const reply = await anvil.request('/anvil/metrics', { host: 'admin.localhost' });
  expect(reply.status).toBe(200);
  return reply.text;
}

/** The value of one sample: `name{a="b",…} value`, labels matched exactly (any order). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries([...match[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (
      Object.keys(found).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => found[k] === v)
    )
      return Number(match[3]);
  }
  return undefined;
}

const meter = { host: 'localhost', api: 'meter' };

describe('/anvil/metrics', () => {
  it('counts requests by API, route template and status class, with their latency', async () => {
    for (let i = 0; i < 3; i++) expect((await anvil.request('/meter/ok')).status).toBe(200);
    expect((await anvil.request('/meter/users/12345')).json()).toEqual({ id: '12345' });
    expect((await anvil.request('/meter/nowhere')).status).toBe(404);
    const text = await scrape();

    expect(sample(text, 'anvil_requests_total', { ...meter, route: 'get /ok', class: '2xx' })).toBe(3);
    expect(sample(text, 'anvil_requests_total', { ...meter, route: 'get /users/{id}', class: '2xx' })).toBe(1);
    expect(sample(text, 'anvil_requests_total', { ...meter, route: '(none)', class: '4xx' })).toBe(1);
    expect(sample(text, 'anvil_request_duration_seconds_count', { ...meter, route: 'get /ok' })).toBe(3);
    expect(sample(text, 'anvil_request_duration_seconds_bucket', { ...meter, route: 'get /ok', le: '+Inf' })).toBe(3);
    // Labels are route templates, never raw paths (in a label's value: a figure may have these digits).
    expect(text).not.toMatch(/\{[^}\n]*12345[^}\n]*\}/);
    expect(text).not.toContain('nowhere');
  });

  it('counts errors by reason: the API answering 5xx, and the router answering 504 for it', async () => {
    expect((await anvil.request('/meter/boom')).status).toBe(503);
    expect((await anvil.request('/meter/slow')).status).toBe(504);
    const text = await scrape();
    expect(sample(text, 'anvil_request_errors_total', { ...meter, route: 'get /boom', reason: 'api' })).toBe(1);
    expect(sample(text, 'anvil_requests_total', { ...meter, route: 'get /boom', class: '5xx' })).toBe(1);
    expect(sample(text, 'anvil_request_errors_total', { ...meter, route: '(none)', reason: 'timeout' })).toBe(1);
    // The log line travels through the instance's stdout: it may come after the metric was read.
    const warning = await waitFor(() => anvil.logLines().find((l) => l.msg === 'request failed: timeout'), {
      what: "the 'request failed: timeout' log line",
    });
    expect(warning).toMatchObject({ api: 'meter', status: 504, reason: 'timeout' });
    expect(warning!.correlationId).toMatch(/\S+/);
  });

  it('counts rate-limit rejections', async () => {
    expect((await anvil.request('/meter/limited')).status).toBe(200);
    expect((await anvil.request('/meter/limited')).status).toBe(429);
    const text = await scrape();
    expect(sample(text, 'anvil_rate_limited_total', { ...meter, route: 'get /limited' })).toBe(1);
    expect(sample(text, 'anvil_requests_total', { ...meter, route: 'get /limited', class: '4xx' })).toBe(1);
  });

  it('shows threads, mailbox depth and isolate heap per API; an API never called holds none', async () => {
    expect((await anvil.request('/meter/custom')).json()).toEqual({ items: 1000 });
    const text = await eventually(async () => {
      const t = await scrape();
      return (sample(t, 'anvil_isolate_heap_bytes', meter) ?? 0) > 0 ? t : null;
    });
    expect(sample(text, 'anvil_actor_threads', meter)).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'anvil_actor_mailbox_depth', meter)).toBe(0);
    expect(sample(text, 'anvil_isolates', meter)).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'anvil_isolate_heap_bytes', meter)).toBeGreaterThan(100_000);
    expect(sample(text, 'anvil_actor_threads', { host: 'localhost', api: 'quiet' })).toBeUndefined();
  });

  it('histograms the CPU of each custom directive call by API and directive, as its threads report it', async () => {
    for (let i = 0; i < 5; i++) expect((await anvil.request('/meter/custom')).status).toBe(200);
    const echo = { host: 'localhost', api: 'meter', directive: 'Echo' };
    const text = await eventually(async () => {
      const t = await scrape();
      return (sample(t, 'anvil_sandbox_cpu_seconds_count', echo) ?? 0) >= 5 ? t : null;
    });
    const calls = sample(text, 'anvil_sandbox_cpu_seconds_count', echo)!;
    expect(sample(text, 'anvil_sandbox_cpu_seconds_bucket', { ...echo, le: '+Inf' })).toBe(calls);
    // Building 1000 objects is real work: more than a microsecond, far less than a second per call.
    const seconds = sample(text, 'anvil_sandbox_cpu_seconds_sum', echo)!;
    expect(seconds / calls).toBeGreaterThan(1e-6);
    expect(seconds / calls).toBeLessThan(1);
    expect(sample(text, 'anvil_sandbox_cpu_seconds_bucket', { ...echo, le: '1' })).toBe(calls);
  });

  it('answers a client off loopback only with the bearer token', async () => {
    const address = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
    if (address === undefined) throw new Error('this test needs a non-loopback IPv4 address on the machine');
    const open = await startInstance({
      args: ['--listen', '0.0.0.0'],
      env: { ANVIL_METRICS_TOKEN: 'metrics-token-for-the-test' },
    });
    try {
      const get = async (headers: Record<string, string>) => {
        const reply = await request(`http://${address}:${open.port}/anvil/metrics`, {
          headers: { host: 'admin.localhost', ...headers },
        });
        return { status: reply.statusCode, text: await reply.body.text() };
      };
      expect(await get({})).toEqual({ status: 401, text: '{"error":"Unauthorized","code":"ANVIL_ERR_UNAUTHORIZED"}' });
      expect((await get({ authorization: 'Bearer wrong-token' })).status).toBe(401);
      const allowed = await get({ authorization: 'Bearer metrics-token-for-the-test' });
      expect(allowed.status).toBe(200);
      expect(allowed.text).toContain('# TYPE anvil_requests_total counter');
    } finally {
      await open.dispose();
    }
  });
});
