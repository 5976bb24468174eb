import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiFiles } from './instance.js';

/** The killers of test/fixtures/apis/killers/Directives: allocations that abort their process, and a query no timeout stops. */
export type Killer = 'ArrayFill' | 'PropertyGrowth' | 'EndlessSql';

const killers = join(import.meta.dirname, '../fixtures/apis/killers/Directives');

/**
 * An API with one endpoint per killer (`get /<Killer>`) and `get /ping`, under limits that let the
 * allocations run until they abort their process (5 s of CPU, 10 s of wall time).
 */
export function killerApi(
  key: string,
  kinds: readonly Killer[] = ['ArrayFill', 'PropertyGrowth', 'EndlessSql'],
): ApiFiles {
  const endpoints = kinds.map((kind) => `  get /${kind}:\n    Try: { directive: ${kind} }\n`).join('');
  const files: ApiFiles = {
    'api.yaml': `key: ${key}\nlimits: { memoryMb: 32, cpuMs: 5000, wallMs: 10000 }\nendpoints:\n${endpoints}  get /ping:\n    Ping: { directive: Ping }\n`,
  };
  for (const kind of kinds) files[`Directives/${kind}.js`] = readFileSync(join(killers, `${kind}.js`), 'utf8');
  return files;
}
