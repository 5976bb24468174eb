// Issue 41: Edges II. The work the host does on a tenant's behalf, outside the isolate's limits —
// router memory, connections, disk, the audit log, the deploy queue, its cell-mates — run as an
// attacker would, one case per phase (bench/edges-ii/<case>.mjs), each with a neighbour API of
// another tenant measured meanwhile. Every phase starts its own instance, so one case's leftovers
// never skew the next. A phase exports `phase({ seconds })` and resolves to
// { case, name, measured, target, met, neighbourP99Ms, neighbourErrors, notes }.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { progress, standalone } from './lib/config.mjs';
import { BENCH_DIR, cleanupAll } from './lib/instance.mjs';
import { fmt, ms } from './lib/targets.mjs';

const PHASES_DIR = join(BENCH_DIR, 'edges-ii');

export async function run(config) {
  const files = (existsSync(PHASES_DIR) ? readdirSync(PHASES_DIR) : []).filter((f) => f.endsWith('.mjs')).sort();
  const results = [];
  for (const file of files) {
    const { phase } = await import(pathToFileURL(join(PHASES_DIR, file)).href);
    progress(`edges II: ${file}`);
    try {
      results.push({ file, ...(await phase({ seconds: config.seconds })) });
    } catch (error) {
      results.push({
        file,
        case: Number.NaN,
        name: file,
        measured: 'failed',
        target: '',
        met: false,
        neighbourP99Ms: Number.NaN,
        neighbourErrors: Number.NaN,
        notes: [String(error.stack ?? error)],
      });
    } finally {
      await cleanupAll();
    }
    const r = results.at(-1);
    progress(
      `edges II case ${r.case} (${r.name}): ${r.measured} (target ${r.target}, ${r.met ? 'met' : 'missed'}); neighbour p99 ${fmt(r.neighbourP99Ms, 2)} ms, ${r.neighbourErrors} errors`,
    );
  }
  results.sort((a, b) => a.case - b.case || a.file.localeCompare(b.file));
  return {
    id: 'edges-tenants',
    title: '12. Edges II: what one tenant makes the host spend, bounded (issue 41)',
    tables: [
      {
        caption:
          'One phase per case of issue 41, each on a fresh instance; neighbour = GET /bare/ping of another API at 200 req/s, open loop, while the attack runs',
        columns: ['case', 'attack', 'measured', 'target', 'result', 'neighbour p99', 'neighbour errors'],
        rows: results.map((r) => [
          String(r.case),
          r.name,
          r.measured,
          r.target,
          r.met ? 'met' : 'missed',
          ms(r.neighbourP99Ms),
          String(r.neighbourErrors),
        ]),
      },
    ],
    targets: results.map((r) => ({
      name: `edges II, case ${r.case}: ${r.name}`,
      display: r.measured,
      target: r.target,
      met: r.met,
      by: r.met ? 'met' : 'missed',
      note: '',
    })),
    notes: results.flatMap((r) => (r.notes ?? []).map((n) => `Case ${r.case}: ${n}`)),
  };
}

standalone(import.meta.url, run);
