import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

// `anvil bench <key> [path]`: load from autocannon, and the API's own figures from /anvil/metrics
// over the same window.

let anvil: TestInstance;
beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      ping: { 'api.yaml': 'key: ping\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n' },
      pong: {
        'api.yaml': 'key: pong\nendpoints:\n  get /:\n    Pong: { directive: Pong }\n',
        'Directives/Pong.js': "export default function (state) { state.message.body = { message: 'pong' }; }\n",
      },
      capped: {
        'api.yaml': `key: capped
before:
  Check: { directive: CheckKey, expected: letmein, current: $.message.header.api-key }
endpoints:
  get /hit:
    Limit: { directive: RateLimit, minuteTotal: 10 }
    Ping: { directive: Ping }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`,
      },
    },
  });
  // Each API's first thread is started before its 1-second run: on a loaded machine a cold start
  // took the whole run once, and nothing was answered in it. (capped: without the key, CheckKey
  // refuses the request before RateLimit counts it.)
  expect((await anvil.request('/ping/ping')).status).toBe(200);
  expect((await anvil.request('/pong/')).status).toBe(200);
  expect((await anvil.request('/capped/hit')).status).toBe(401);
});
afterAll(async () => anvil?.dispose());

function bench(...args: string[]) {
  const result = anvilCli(['bench', ...args, '--port', String(anvil.port), '-d', '1', '-c', '4', '--json']);
  return {
    status: result.status,
    report: result.stdout.trim() === '' ? null : JSON.parse(result.stdout),
    stderr: result.stderr,
  };
}

describe('anvil bench', () => {
  it('reports throughput and latency, and the same requests counted by the server', () => {
    const { status, report, stderr } = bench('ping', '/ping');
    expect(status, stderr).toBe(0);
    const { client, server } = report;
    expect(client.requests).toBeGreaterThan(50);
    expect(client.byClass['2xx']).toBe(client.requests);
    expect(client.errors).toBe(0);
    expect(client.latencyMs.p99).toBeGreaterThanOrEqual(client.latencyMs.p50);
    // The server saw every answered request, and at most the few in flight when the clock ran out.
    expect(server.requests['2xx']).toBeGreaterThanOrEqual(client.requests);
    expect(server.requests['2xx']).toBeLessThanOrEqual(client.requests + 4);
    expect(server.errors).toEqual({});
    expect(server.latencyMs.p50).toBeGreaterThan(0);
    expect(server.threads).toBeGreaterThanOrEqual(1);
  });

  it('passes headers, and shows rate-limit rejections the server counted', () => {
    const { status, report } = bench('capped', '/hit', '-H', 'api-key: letmein');
    expect(status).toBe(0);
    // 10 a minute: 10 answers, or 20 when the second crossed into a new minute.
    expect([10, 20]).toContain(report.client.byClass['2xx']);
    expect(report.client.byClass['4xx']).toBe(report.client.requests - report.client.byClass['2xx']);
    expect(report.server.rateLimited).toBeGreaterThanOrEqual(report.client.byClass['4xx']);
    expect(report.server.requests['4xx']).toBe(report.server.rateLimited);
  });

  it('headlines the 2xx answers per second, and warns when most answers were refusals', () => {
    const printed = anvilCli(
      ['bench', 'capped', '/hit', '-H', 'api-key: letmein', '--port', String(anvil.port), '-d', '1', '-c', '4'],
      { env: { NO_COLOR: '1' } },
    );
    expect(printed.status, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/client {3}[\d,]+ 2xx\/s {3}[\d,]+ req\/s in all/);
    expect(printed.stdout).toMatch(
      /warning {2}[\d,]+ of [\d,]+ answers were not 2xx \(4xx [\d,]+, [\d,]+ rate-limited\): the req\/s is mostly of refusals/,
    );
    const plain = anvilCli(['bench', 'pong', '/', '--port', String(anvil.port), '-d', '1', '-c', '4'], {
      env: { NO_COLOR: '1' },
    });
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout).not.toContain('warning');
  });

  it("shows the CPU each custom directive call used in the sandbox, as the API's threads measured it", () => {
    const { status, report, stderr } = bench('pong', '/');
    expect(status, stderr).toBe(0);
    const [pong, ...others] = report.server.sandboxCpu;
    expect(others).toEqual([]);
    expect(pong.directive).toBe('Pong');
    // Every answered request was one call (the counts come from the threads' reports, not the
    // client), and at most 4 calls (-c 4) were still in flight when the client stopped counting. A
    // call can fail on a loaded machine (its thread starved past its timeout: 503, or a client
    // timeout): it counts too.
    expect(pong.calls).toBeGreaterThanOrEqual(report.client.byClass['2xx']);
    expect(pong.calls).toBeLessThanOrEqual(report.client.requests + report.client.errors + 4);
    expect(pong.meanUs).toBeGreaterThan(0);
    expect(pong.p99Us).toBeGreaterThanOrEqual(pong.p50Us);
  });

  it('says so when nothing answers', () => {
    const result = anvilCli(['bench', 'ping', '/ping', '--port', '9', '-d', '1', '-c', '1']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('is the instance running on port 9?');
  });
});
