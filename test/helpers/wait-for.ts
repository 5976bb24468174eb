import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestInstance } from './instance.js';

export interface WaitOptions {
  /** What is waited for, in words: the failure names it ("timed out after 10000 ms waiting for <what>"). */
  what: string;
  timeoutMs?: number;
  everyMs?: number;
}

/**
 * Polls `check` until it returns a truthy value, which it returns; a check that throws counts as not
 * yet. Past `timeoutMs` it fails, naming `what` it waited for and the check's last error. Tests wait
 * with it for something they can observe (a log line, a metric, a file) instead of sleeping.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { what, timeoutMs = 10_000, everyMs = 20 }: WaitOptions,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export type ApiLogLine = Record<string, any>;

/**
 * The lines of an API's request log so far (what its Log directive wrote to
 * `<data>/<host>/<env>/<key>/logs/*.jsonl`), file by file. A line still being written is left out.
 */
export function apiLog(
  anvil: Pick<TestInstance, 'dataDir'>,
  key: string,
  env = 'dev',
  host = 'localhost',
): ApiLogLine[] {
  const dir = join(anvil.dataDir, host, env, key, 'logs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((file) => {
      const lines = readFileSync(join(dir, file), 'utf8').split('\n');
      lines.pop(); // '' after the last newline, or a line not yet complete
      return lines.filter(Boolean).map((line) => JSON.parse(line) as ApiLogLine);
    });
}

/** True for a line the Log directive wrote in AFTER_FLOW (its trace has entries marked "(after)"). */
export const isAfterFlow = (line: ApiLogLine): boolean => (line.entries as string[]).some((e) => e.endsWith('(after)'));

/**
 * Waits until the API's request log holds `count` lines written before the response that `match`
 * (a Log entry placed before the slow part of an endpoint announces that its request is in flight);
 * returns those lines. `what` names the requests, for the failure.
 */
export function waitForStarted(
  anvil: TestInstance,
  key: string,
  match: (line: ApiLogLine) => boolean,
  { what, count = 1, timeoutMs = 10_000 }: { what: string; count?: number; timeoutMs?: number },
): Promise<ApiLogLine[]> {
  return waitFor(
    () => {
      const started = apiLog(anvil, key).filter((l) => !isAfterFlow(l) && match(l));
      return started.length >= count ? started : null;
    },
    { what: `${count} × ${what} in flight (announced by its Log entry in the request log of ${key})`, timeoutMs },
  );
}
