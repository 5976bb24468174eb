// Issue 7, item 3: noisy neighbour. API B (a copy of bench/apis/flow, GET /ping through the full
// flow) is measured at a fixed rate, open loop, alone and while API A (bench/apis/hog) saturates
// its threads with CPU work: `wrk -c16` on GET /hog/burn, ~40 ms of CPU per call in a custom
// directive. B's key is chosen so that rendezvous hashing puts it in another cell than A (with
// one cell per core, as by default). Control: the same probe against a raw node:http server
// alone and under the same hog load — what the hog's CPU use alone does to any server on this
// machine. Each run alternates: B alone, B with hog, raw alone, raw with hog.
import { setTimeout as sleep } from 'node:timers/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { progress, standalone } from './lib/config.mjs';
import { cpuSnapshot } from './lib/cpu.mjs';
import { FLOW_HEADERS, ROOT, cellsOf, get, startAnvil, startServer } from './lib/instance.mjs';
import { openLoop, saturate } from './lib/load.mjs';
import { median } from './lib/stats.mjs';
import { checkTarget, fmt, ms, ratio } from './lib/targets.mjs';

const RATE = 500; // B's requests per second
const HOG_CONNECTIONS = 16;

export async function run(config) {
  const { seconds, runs } = config;
  const cells = availableParallelism();
  const { assignCell } = await import(pathToFileURL(join(ROOT, 'dist', 'cell', 'process', 'assign.js')).href);
  const { formatApiId } = await import(pathToFileURL(join(ROOT, 'dist', 'shared', 'protocol', 'api-id.js')).href);
  const cellOf = (key) => assignCell(formatApiId({ host: 'localhost', env: 'dev', key }), cells);
  const hogCell = cellOf('hog');
  let n = 0;
  while (cells > 1 && cellOf(`neighbour-${n}`) === hogCell && n < 1000) n++;
  const neighbour = `neighbour-${n}`;

  progress(
    `noisy: starting Anvil (hog in cell ${hogCell}, ${neighbour} in cell ${cellOf(neighbour)}) and raw node:http`,
  );
  const anvil = await startAnvil({
    apis: [{ from: 'hog' }, { from: 'flow', key: neighbour }],
    args: ['--cells', String(cells)],
  });
  const raw = await startServer('raw-server.mjs');
  try {
    const b = anvil.url(`/${neighbour}/ping`);
    const hogUrl = anvil.url('/hog/burn');
    const first = await get(anvil.port, `/${neighbour}/ping`, { headers: FLOW_HEADERS });
    if (first.status !== 200) throw new Error(`GET /${neighbour}/ping answered ${first.status} ${first.body}`);
    const burn = await get(anvil.port, '/hog/burn');
    if (burn.status !== 200) throw new Error(`GET /hog/burn answered ${burn.status} ${burn.body}\n${anvil.log()}`);

    // Warm-up: B's thread and the JIT (saturated, so that B's code is optimised before the first
    // phase), the hog's threads and isolates (the hog moves to the low-priority cell here), B again.
    await saturate(b, { seconds: 2, connections: 8, headers: FLOW_HEADERS });
    await saturate(hogUrl, { seconds: 2, connections: HOG_CONNECTIONS });
    await openLoop(b, { rate: RATE, seconds: 1, warmup: 0, headers: FLOW_HEADERS });

    /** One phase: the probe on `url`, with or without the hog around it. */
    const phase = async (url, withHog, snapshot) => {
      if (!withHog) return { probe: await openLoop(url, { rate: RATE, seconds, headers: FLOW_HEADERS }) };
      // The hog starts 0.5 s before the probe (whose first second is a warm-up) and ends after it.
      const hog = saturate(hogUrl, { seconds: seconds + 2, connections: HOG_CONNECTIONS });
      await sleep(500);
      const cpu = snapshot
        ? sleep(1000 + (seconds * 1000) / 4).then(() =>
            cpuSnapshot(
              [
                { label: 'router', pid: anvil.pid },
                ...cellsOf(anvil).map((c) => ({
                  label: `cell ${c.cell}${c.cell === hogCell ? ' (hog)' : ''}${c.cell === cellOf(neighbour) ? ' (B)' : ''}`,
                  pid: c.pid,
                })),
              ],
              Math.max(0.5, seconds / 2),
            ),
          )
        : null;
      const probe = await openLoop(url, { rate: RATE, seconds, headers: FLOW_HEADERS });
      return { probe, hog: await hog, cpu: cpu ? await cpu : null };
    };

    const perRun = [];
    let cpu = '';
    for (let i = 0; i < runs; i++) {
      const r = {};
      r.alone = (await phase(b, false)).probe;
      const withHog = await phase(b, true, i === 0);
      r.withHog = withHog.probe;
      r.hog = withHog.hog;
      if (withHog.cpu) cpu = withHog.cpu;
      r.rawAlone = (await phase(raw.url('/'), false)).probe;
      const rawHog = await phase(raw.url('/'), true, false);
      r.rawWithHog = rawHog.probe;
      r.hog2 = rawHog.hog;
      progress(
        `noisy run ${i + 1}/${runs}: B p99 alone ${fmt(r.alone.p99, 2)} ms, with hog ${fmt(r.withHog.p99, 2)} ms; raw p99 alone ${fmt(r.rawAlone.p99, 2)} ms, with hog ${fmt(r.rawWithHog.p99, 2)} ms; hog ${fmt(r.hog.rps)} req/s, ${r.hog.errors} errors`,
      );
      perRun.push(r);
    }

    const med = (f) => median(perRun.map(f));
    const p99Ratio = med((r) => r.withHog.p99 / r.alone.p99);
    const rawRatio = med((r) => r.rawWithHog.p99 / r.rawAlone.p99);
    const row = (label, key) => [
      label,
      fmt(med((r) => r[key].rate)),
      ms(med((r) => r[key].p50)),
      ms(med((r) => r[key].p90)),
      ms(med((r) => r[key].p99)),
      ms(med((r) => r[key].max)),
      String(perRun.reduce((s, r) => s + r[key].errors, 0)),
    ];
    return {
      id: 'noisy',
      title: '3. Noisy neighbour',
      tables: [
        {
          caption: `B = GET /${neighbour}/ping (full flow) at ${RATE} req/s, open loop, ${seconds} s per phase; A = wrk -t1 -c${HOG_CONNECTIONS} on GET /hog/burn (~40 ms of CPU per call in a custom directive); median of ${perRun.length} runs`,
          columns: ['probe', 'achieved req/s', 'p50', 'p90', 'p99', 'max', 'errors'],
          rows: [
            row('B alone', 'alone'),
            row('B while A hogs', 'withHog'),
            row('control: raw node:http alone', 'rawAlone'),
            row('control: raw node:http while A hogs', 'rawWithHog'),
          ],
        },
        {
          caption: 'Ratios (with A hogging ÷ alone, taken within each run)',
          columns: ['', 'p50', 'p99'],
          rows: [
            ['B (Anvil)', ratio(med((r) => r.withHog.p50 / r.alone.p50)), ratio(p99Ratio)],
            ['control: raw node:http', ratio(med((r) => r.rawWithHog.p50 / r.rawAlone.p50)), ratio(rawRatio)],
          ],
        },
      ],
      targets: [
        checkTarget({
          name: "noisy neighbour: B's p99 while A hogs its threads ÷ B's p99 alone",
          measured: p99Ratio,
          op: '<=',
          limit: 2,
          format: ratio,
          note: `the same hog makes a raw node:http server's p99 ${ratio(rawRatio)}`,
        }),
      ],
      notes: [
        `A (the hog) during B's phases: ${fmt(med((r) => r.hog.rps))} req/s, ${perRun.reduce((s, r) => s + r.hog.errors, 0)} errors in all runs; A's threads: --max-threads 2 (default), ${cells} cells, A in cell ${hogCell}, B in cell ${cellOf(neighbour)}.`,
        `CPU during the first run's hog phase (100 % = one core): ${cpu}.`,
        ...(anvil.warnings() ? [`Anvil's log: ${anvil.warnings()}.`] : []),
      ],
      perRun: perRun.map(
        (r, i) =>
          `run ${i + 1}: B p50/p99 alone ${fmt(r.alone.p50, 2)}/${fmt(r.alone.p99, 2)} ms, with hog ${fmt(r.withHog.p50, 2)}/${fmt(r.withHog.p99, 2)} ms; raw alone ${fmt(r.rawAlone.p50, 2)}/${fmt(r.rawAlone.p99, 2)} ms, with hog ${fmt(r.rawWithHog.p50, 2)}/${fmt(r.rawWithHog.p99, 2)} ms; hog ${fmt(r.hog.rps)} req/s (${r.hog.errors} errors), ${fmt(r.hog2.rps)} req/s during the control`,
      ),
    };
  } finally {
    await raw.stop();
    await anvil.stop();
  }
}

standalone(import.meta.url, run);
