import type { TestInstance } from './instance.js';

/** The instance's `/anvil/metrics` (the test runs on loopback, so no token is needed). */
export async function scrapeMetrics(anvil: TestInstance): Promise<string> {
  const reply = await anvil.request('/anvil/metrics', { host: 'admin.localhost' });
  if (reply.status !== 200) throw new Error(`/anvil/metrics answered ${reply.status}: ${reply.text}`);
  return reply.text;
}

/** The value of one sample: `name{a="b",…} value`, labels matched exactly (any order); undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (
      Object.keys(found).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => found[k] === v)
    )
      return Number(match[3]);
  }
  return undefined;
}

/** `anvil_quota_refusals_total` of one API and quota (0 when never counted). */
export async function quotaRefusals(anvil: TestInstance, api: string, quota: string): Promise<number> {
  return sample(await scrapeMetrics(anvil), 'anvil_quota_refusals_total', { host: 'localhost', api, quota }) ?? 0;
}
