// Issue 7, item 4: cold start — the first request to an API whose pool is at 0 threads.
// Each run starts an instance with BENCH_COLD_SAMPLES copies of bench/apis/flow (cold-0, cold-1, …)
// and --idle-timeout 2s, warms the instance up on another API, then:
//  1. first request ever: GET /cold-<i>/ping once per API, one after the other (250 ms apart), on
//     one keep-alive connection, timed from send to the last byte of the answer;
//  2. after idle: waits until the idle timeout has stopped those threads (the cells' thread counts
//     back where they were), and times a first request to each API again.
// p50/p99 per run; the medians of the runs are reported.
import { setTimeout as sleep } from 'node:timers/promises';
import { progress, standalone } from './lib/config.mjs';
import { Connection, requestBytes, requestOnce } from './lib/http-client.mjs';
import { FLOW_HEADERS, cellsOf, startAnvil, threadCount } from './lib/instance.mjs';
import { closedLoop } from './lib/load.mjs';
import { median, summarize } from './lib/stats.mjs';
import { checkTarget, fmt, ms } from './lib/targets.mjs';

const IDLE_TIMEOUT_S = 2;
// Between two cold starts: long enough for a cell to have replaced a spare thread it handed out.
const GAP_MS = 250;

export async function run(config) {
  const { runs, coldSamples } = config;
  const perRun = [];
  for (let i = 0; i < runs; i++) perRun.push(await oneRun(coldSamples, i, runs));

  const med = (f) => median(perRun.map(f));
  const rows = [
    ['first request ever (pool at 0 since the deploy)', ...figures(perRun.map((r) => r.first))],
    [
      `first request after the pool went back to 0 (--idle-timeout ${IDLE_TIMEOUT_S}s)`,
      ...figures(perRun.map((r) => r.again)),
    ],
    ['for comparison: the same request to a warm API', ...figures(perRun.map((r) => r.warm))],
  ];
  return {
    id: 'cold',
    title: '4. Cold start',
    tables: [
      {
        caption: `GET /cold-<i>/ping (full flow), ${coldSamples} APIs per run, one after the other, ${GAP_MS} ms apart; median of ${perRun.length} runs`,
        columns: ['request', 'samples per run', 'p50', 'p90', 'p99', 'max', 'errors'],
        rows,
      },
    ],
    targets: [
      checkTarget({
        name: 'cold start p50, first request ever',
        measured: med((r) => r.first.p50),
        op: '<',
        limit: 30,
        format: ms,
      }),
      checkTarget({
        name: 'cold start p50, first request after the pool went back to 0',
        measured: med((r) => r.again.p50),
        op: '<',
        limit: 30,
        format: ms,
      }),
    ],
    notes: [
      `Cell threads (all cells, from /proc) per run: before the first round, after it, and when the second round started: ${perRun.map((r) => r.threads.join(' → ')).join('; ')}.`,
      'Timed in the client from writing the request to the end of the answer, on a connection already open (no TCP handshake); the warm figure is the same request to a warm API, sequential, for a second.',
      ...perRun.filter((r) => r.warnings).map((r) => `Anvil's log (run ${perRun.indexOf(r) + 1}): ${r.warnings}.`),
    ],
    perRun: perRun.map(
      (r, i) =>
        `run ${i + 1}: first ever p50 ${fmt(r.first.p50, 2)} / p99 ${fmt(r.first.p99, 2)} ms; after idle p50 ${fmt(r.again.p50, 2)} / p99 ${fmt(r.again.p99, 2)} ms; warm p50 ${fmt(r.warm.p50, 2)} ms`,
    ),
  };
}

function figures(list) {
  const med = (f) => median(list.map(f));
  return [
    String(list[0]?.count ?? 0),
    ms(med((x) => x.p50)),
    ms(med((x) => x.p90)),
    ms(med((x) => x.p99)),
    ms(med((x) => x.max)),
    String(list.reduce((s, x) => s + x.errors, 0)),
  ];
}

async function oneRun(samples, index, runs) {
  const keys = Array.from({ length: samples }, (_, i) => `cold-${i}`);
  progress(`cold run ${index + 1}/${runs}: starting Anvil with ${samples} APIs`);
  const anvil = await startAnvil({
    apis: [{ from: 'flow', key: 'warm' }, ...keys.map((key) => ({ from: 'flow', key }))],
    args: ['--idle-timeout', `${IDLE_TIMEOUT_S}s`],
  });
  try {
    // Warm-up of the instance (router, cells, a first thread) on another API; then its warm latency.
    await closedLoop(anvil.url('/warm/ping'), { seconds: 0.5, headers: FLOW_HEADERS });
    const warm = await closedLoop(anvil.url('/warm/ping'), { seconds: 1, headers: FLOW_HEADERS });
    const cellThreads = () => cellsOf(anvil).reduce((s, c) => s + threadCount(c.pid), 0);
    await sleep((IDLE_TIMEOUT_S + 1.5) * 1000); // the warm API's threads gone too
    const threads = [cellThreads()];
    const connection = new Connection(anvil.port);
    const round = async () => {
      const times = [];
      let errors = 0;
      for (const key of keys) {
        const reply = await requestOnce(
          connection,
          requestBytes(anvil.url(`/${key}/ping`), { host: 'localhost', headers: FLOW_HEADERS }),
        );
        if (reply.status !== 200) errors++;
        times.push(reply.ms);
        await sleep(GAP_MS);
      }
      return { ...summarize(times), errors };
    };
    const first = await round();
    threads.push(cellThreads());
    // Wait for the idle timeout to stop every thread: thread counts back to where they started.
    const until = Date.now() + 30_000;
    await sleep(IDLE_TIMEOUT_S * 1000);
    while (cellThreads() > threads[0] && Date.now() < until) await sleep(250);
    threads.push(cellThreads());
    const again = await round();
    connection.close();
    progress(
      `cold run ${index + 1}/${runs}: first ever p50 ${fmt(first.p50, 2)} ms, p99 ${fmt(first.p99, 2)} ms; after idle p50 ${fmt(again.p50, 2)} ms, p99 ${fmt(again.p99, 2)} ms; threads ${threads.join(' → ')}`,
    );
    return { first, again, warm: { ...warm, count: warm.requests }, threads, warnings: anvil.warnings() };
  } finally {
    await anvil.stop();
  }
}

standalone(import.meta.url, run);
