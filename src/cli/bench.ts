import type { Command } from 'commander';
import { readInstanceEnvironment } from './environment.js';
import { argument, integer } from './options.js';
import { CliError, out, run } from './output.js';
import { bucketGrowth, growthBy, parseSamples, quantile, select, sum, type Sample } from './prometheus-text.js';
import { SANDBOX_CPU_METRIC } from '../front/meters/sandbox-cpu-meters.js';

/** Actor threads report their sandbox CPU every 2 s: the second scrape waits for the last report. */
const THREAD_REPORT_WAIT_MS = 2_300;

interface BenchFlags {
  connections: number;
  duration: number;
  host: string;
  port: number;
  method: string;
  header: string[];
  body?: string;
  json: boolean;
}

export interface BenchReport {
  target: string;
  connections: number;
  seconds: number;
  client: {
    requests: number;
    perSecond: number;
    errors: number;
    timeouts: number;
    byClass: Record<string, number>;
    latencyMs: { p50: number; p90: number; p99: number; max: number };
  };
  /** From /anvil/metrics over the same window; null when the metrics could not be read. */
  server: {
    requests: Record<string, number>;
    errors: Record<string, number>;
    rateLimited: number;
    latencyMs: { mean: number | null; p50: number | null; p99: number | null };
    threads: number;
    mailbox: number;
    /** CPU per custom directive call, by directive, as the API's threads measured it in their isolates. */
    sandboxCpu: Array<{ directive: string; calls: number; meanUs: number; p50Us: number | null; p99Us: number | null }>;
  } | null;
}

function parseHeader(value: string, previous: string[]): string[] {
  if (!/^[^:\s]+:/.test(value)) throw new CliError(`-H must be "name: value", got "${value}"`);
  return [...previous, value];
}

function headersOf(list: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of list) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return headers;
}

async function scrape(port: number): Promise<Sample[] | null> {
  const [{ request }, { localhostAgent }] = await Promise.all([import('undici'), import('./localhost-dispatcher.js')]);
  const agent = localhostAgent();
  try {
    const token = readInstanceEnvironment().metricsToken;
    const reply = await request(`http://admin.localhost:${port}/anvil/metrics`, {
      dispatcher: agent,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    const text = await reply.body.text();
    return reply.statusCode === 200 ? parseSamples(text) : null;
  } catch {
    return null;
  } finally {
    await agent.close().catch(() => {});
  }
}

function serverFigures(
  before: Sample[] | null,
  after: Sample[] | null,
  host: string,
  api: string,
): BenchReport['server'] {
  if (before === null || after === null) return null;
  const match = { host, api };
  const buckets = bucketGrowth(before, after, 'anvil_request_duration_seconds', match);
  const count =
    sum(select(after, 'anvil_request_duration_seconds_count', match)) -
    sum(select(before, 'anvil_request_duration_seconds_count', match));
  const total =
    sum(select(after, 'anvil_request_duration_seconds_sum', match)) -
    sum(select(before, 'anvil_request_duration_seconds_sum', match));
  const ms = (seconds: number | null) => (seconds === null ? null : seconds * 1000);
  return {
    requests: growthBy(before, after, 'anvil_requests_total', match, 'class'),
    errors: growthBy(before, after, 'anvil_request_errors_total', match, 'reason'),
    rateLimited:
      sum(select(after, 'anvil_rate_limited_total', match)) - sum(select(before, 'anvil_rate_limited_total', match)),
    latencyMs: {
      mean: count > 0 ? (total / count) * 1000 : null,
      p50: ms(quantile(buckets, 0.5)),
      p99: ms(quantile(buckets, 0.99)),
    },
    threads: sum(select(after, 'anvil_actor_threads', match)),
    mailbox: sum(select(after, 'anvil_actor_mailbox_depth', match)),
    sandboxCpu: sandboxCpu(before, after, match),
  };
}

function sandboxCpu(
  before: Sample[],
  after: Sample[],
  match: Record<string, string>,
): NonNullable<BenchReport['server']>['sandboxCpu'] {
  const directives = new Set(select(after, `${SANDBOX_CPU_METRIC}_count`, match).map((s) => s.labels.directive ?? ''));
  const us = (seconds: number | null) => (seconds === null ? null : seconds * 1e6);
  const out: NonNullable<BenchReport['server']>['sandboxCpu'] = [];
  for (const directive of directives) {
    const one = { ...match, directive };
    const calls =
      sum(select(after, `${SANDBOX_CPU_METRIC}_count`, one)) - sum(select(before, `${SANDBOX_CPU_METRIC}_count`, one));
    if (calls <= 0) continue;
    const seconds =
      sum(select(after, `${SANDBOX_CPU_METRIC}_sum`, one)) - sum(select(before, `${SANDBOX_CPU_METRIC}_sum`, one));
    const buckets = bucketGrowth(before, after, SANDBOX_CPU_METRIC, one);
    out.push({
      directive,
      calls,
      meanUs: (seconds / calls) * 1e6,
      p50Us: us(quantile(buckets, 0.5)),
      p99Us: us(quantile(buckets, 0.99)),
    });
  }
  return out;
}

type Autocannon = typeof import('autocannon');

export const AUTOCANNON_MISSING = 'anvil bench needs the optional package autocannon: npm install autocannon';

/**
 * autocannon is an optional dependency (package.json `optionalDependencies`): only `anvil bench`
 * loads it, on demand, and says how to install it when it is missing.
 */
export async function loadAutocannon(
  load: () => Promise<{ default: Autocannon }> = () => import('autocannon'),
): Promise<Autocannon> {
  try {
    return (await load()).default;
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const missing =
      (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && /['"]autocannon['"]/.test(String(message));
    if (missing) throw new CliError(AUTOCANNON_MISSING);
    throw error;
  }
}

/** Drives load at one API with autocannon and reads the API's own figures from /anvil/metrics around it. */
export async function runBench(key: string, path: string, flags: BenchFlags): Promise<BenchReport> {
  const autocannon = await loadAutocannon();
  const headers = headersOf(flags.header);
  const isLocal = flags.host === 'localhost' || flags.host.endsWith('.localhost');
  const target = `http://${flags.host}:${flags.port}/${key}${path.startsWith('/') ? path : `/${path}`}`;
  const url = isLocal ? target.replace(`//${flags.host}:`, '//127.0.0.1:') : target;
  // Metrics are labelled with the public host: the admin host reaches an API of `public-host`.
  const metricsHost = headers['public-host'] ?? flags.host;

  const before = await scrape(flags.port);
  const result = await autocannon({
    url,
    connections: flags.connections,
    duration: flags.duration,
    method: flags.method.toUpperCase() as 'GET',
    headers: { ...headers, host: flags.host },
    body: flags.body,
  });
  if (before !== null) await new Promise((resolve) => setTimeout(resolve, THREAD_REPORT_WAIT_MS));
  const after = await scrape(flags.port);
  if (result.requests.total === 0 && result.errors > 0) {
    throw new CliError(
      `no request got an answer from ${target} (${result.errors} connection errors): is the instance running on port ${flags.port}?`,
    );
  }
  return {
    target,
    connections: flags.connections,
    seconds: result.duration,
    client: {
      requests: result.requests.total,
      perSecond: result.requests.total / result.duration,
      errors: result.errors,
      timeouts: result.timeouts,
      byClass: {
        '1xx': result['1xx'],
        '2xx': result['2xx'],
        '3xx': result['3xx'],
        '4xx': result['4xx'],
        '5xx': result['5xx'],
      },
      latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    },
    server: serverFigures(before, after, metricsHost, key),
  };
}

const n = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number | null) => (value === null ? '–' : `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`);
const us = (value: number | null) =>
  value === null ? '–' : value < 1000 ? `${value.toFixed(1)} µs` : ms(value / 1000);
const classes = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([, count]) => count !== 0)
    .map(([name, count]) => `${name} ${n(count)}`)
    .join(' · ') || 'none';

function printReport(report: BenchReport): void {
  const { c } = out;
  const { client, server } = report;
  out.line(
    `${c.bold('anvil bench')} ${report.target} — ${report.connections} connections, ${report.seconds.toFixed(1)} s`,
  );
  // The headline is what the endpoint answered: a run refused by a rate limit or a key check is
  // fast for reasons that are not the endpoint's work.
  const answered = client.byClass['2xx'] ?? 0;
  const refused = client.requests - answered;
  const share = client.requests === 0 ? 0 : answered / client.requests;
  out.line(
    `  client   ${c.bold(`${n(client.perSecond * share)} 2xx/s`)}   ${n(client.perSecond)} req/s in all   ${n(client.requests)} requests   ${classes(client.byClass)}   errors ${client.errors} (timeouts ${client.timeouts})`,
  );
  if (refused > 0.1 * client.requests) {
    const others = Object.fromEntries(Object.entries(client.byClass).filter(([name]) => name !== '2xx'));
    out.line(
      c.yellow(
        `  warning  ${n(refused)} of ${n(client.requests)} answers were not 2xx (${classes(others)}${server !== null && server.rateLimited > 0 ? `, ${n(server.rateLimited)} rate-limited` : ''}): the req/s is mostly of refusals, not of the endpoint's work`,
      ),
    );
  }
  out.line(
    `  latency  p50 ${ms(client.latencyMs.p50)}   p90 ${ms(client.latencyMs.p90)}   p99 ${ms(client.latencyMs.p99)}   max ${ms(client.latencyMs.max)}`,
  );
  if (server === null) {
    out.line(c.yellow('  server   /anvil/metrics could not be read (loopback only, or set ANVIL_METRICS_TOKEN)'));
    return;
  }
  out.line(
    `  server   ${classes(server.requests)}   errors ${classes(server.errors)}   rate-limited ${n(server.rateLimited)}`,
  );
  out.line(
    `           in Anvil: mean ${ms(server.latencyMs.mean)}   p50 ${ms(server.latencyMs.p50)}   p99 ${ms(server.latencyMs.p99)}   (router → actor → router, from the histogram)`,
  );
  out.line(`           threads ${server.threads}, mailbox ${server.mailbox} at the end`);
  for (const d of server.sandboxCpu) {
    out.line(
      `  sandbox  ${d.directive}: CPU per call mean ${us(d.meanUs)}   p50 ${us(d.p50Us)}   p99 ${us(d.p99Us)}   (${n(d.calls)} calls)`,
    );
  }
}

export function registerBench(program: Command): void {
  program
    .command('bench <key> [path]')
    .description(
      "Drive load at one API (autocannon) and print throughput, latency percentiles, errors, and the API's own figures from /anvil/metrics over the same window.",
    )
    .option('-c, --connections <n>', 'concurrent connections', argument('--connections', integer(1, 10_000)), 50)
    .option('-d, --duration <seconds>', 'how long to run', argument('--duration', integer(1, 3600)), 10)
    .option('--host <name>', 'the host to call (a public host, or an admin host with -H public-host…)', 'localhost')
    .option('--port <n>', "the instance's port", argument('--port', integer(1, 65535)), 8080)
    .option('-m, --method <verb>', 'HTTP method', 'GET')
    .option('-H, --header <line>', 'a request header "name: value" (repeatable)', parseHeader, [])
    .option('-b, --body <text>', 'request body')
    .option('--json', 'print JSON for scripts', false)
    .addHelpText(
      'after',
      '\nExamples:\n  anvil bench ping /ping -c 50 -d 10\n  anvil bench secured /status -H "api-key: change-me"\n',
    )
    .action((key: string, path: string | undefined, flags: BenchFlags) =>
      run(flags.json, async () => {
        const report = await runBench(key, path ?? '/', flags);
        if (flags.json) out.json({ ok: true, ...report });
        else printReport(report);
      }),
    );
}
