// Issue 45: `anvil test` on a fixture API with 100 cases (mocks of an upstream host and of another
// API on the bus, the test clock moved past a RateLimit window, seed SQL, key-value entries, Maps
// per case) must pass in ≤ 5 s on the 2-core VM. The cases are those of
// test/fixtures/apis/tested/tests/notes.yaml, repeated to 100 in a copy of the folder. Reported:
// the wall time of the whole command (node's start, compiling the folder, every case), median of
// BENCH_RUNS runs, and the runner's own time as it prints it.
//   npm run build && node bench/anvil-test.mjs
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { progress, standalone } from './lib/config.mjs';
import { median } from './lib/stats.mjs';
import { fmt } from './lib/targets.mjs';

const CASES = 100;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = join(ROOT, 'test/fixtures/apis/tested');

export async function run(config) {
  const folder = mkdtempSync(join(tmpdir(), 'anvil-test-bench-'));
  try {
    cpSync(FIXTURE, folder, { recursive: true });
    const source = parse(readFileSync(join(FIXTURE, 'tests/notes.yaml'), 'utf8'));
    const cases = Array.from({ length: CASES }, (_, i) => ({
      ...source.cases[i % source.cases.length],
      name: `${i + 1}: ${source.cases[i % source.cases.length].name}`,
    }));
    rmSync(join(folder, 'tests'), { recursive: true });
    mkdirSync(join(folder, 'tests'));
    writeFileSync(join(folder, 'tests/many.yaml'), stringify({ ...source, cases }, { aliasDuplicateObjects: false }));
    const walls = [];
    const runner = [];
    for (let r = 0; r < Math.max(config.runs, 5); r++) {
      const started = performance.now();
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [join(ROOT, 'bin/anvil.js'), 'test', folder, '--json'],
        { maxBuffer: 16 * 2 ** 20 },
      );
      const wall = performance.now() - started;
      const result = JSON.parse(stdout);
      if (!result.ok || result.passed !== CASES)
        throw new Error(`anvil test did not pass all ${CASES} cases: ${stdout.slice(0, 2000)}`);
      const ms = result.cases.reduce((sum, c) => sum + c.ms, 0);
      walls.push(wall);
      runner.push(ms);
      progress(
        `anvil test run ${r + 1}: ${CASES} cases passed in ${fmt(wall / 1000, 2)} s (cases ${fmt(ms / 1000, 2)} s)`,
      );
    }
    return {
      id: 'anvil-test',
      title: `anvil test: ${CASES} cases of test/fixtures/apis/tested (bench/anvil-test.mjs)`,
      tables: [
        {
          caption: `median of ${walls.length} runs; target ≤ 5 s for the whole command`,
          columns: ['what', 'time'],
          rows: [
            ['the whole command (node start, compile, 100 cases)', `${fmt(median(walls) / 1000, 2)} s`],
            ['the 100 cases alone', `${fmt(median(runner) / 1000, 2)} s`],
            ['per case', `${fmt(median(runner) / CASES, 1)} ms`],
          ],
        },
      ],
      perRun: walls.map((w, i) => `run ${i + 1}: ${fmt(w / 1000, 2)} s (cases ${fmt(runner[i] / 1000, 2)} s)`),
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

standalone(import.meta.url, run);
