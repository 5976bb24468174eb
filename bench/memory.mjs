// Issue 7, item 5: memory. Resident memory (VmRSS, summed over the router process and all its
// descendants: cells, the esbuild service) of a fresh instance with 1, 100 and 1000 deployed
// copies of bench/apis/flow (deployed at boot from --apis, made public), idle: no request since
// the boot, measured after the instance has settled (3 s; then the median of 5 samples 400 ms
// apart). Then, on the 1000-API instance, 20 of them active at once (woken by one request each,
// then each sent requests on its own connection, one after the other, all 20 at the same time),
// measured while that load runs.
// Per-API figures are the increase over the 1-API instance divided by the APIs added.
import { setTimeout as sleep } from 'node:timers/promises';
import { progress, standalone } from './lib/config.mjs';
import { FLOW_HEADERS, PUBLIC_HOST_KEY, cellsOf, get, startAnvil, threadCount, treeRss } from './lib/instance.mjs';
import { closedLoop } from './lib/load.mjs';
import { median } from './lib/stats.mjs';
import { checkTarget, fmt, kib, mib } from './lib/targets.mjs';

const SIZES = [1, 100, 1000];
const ACTIVE = 20;

/** The median of a few RSS samples of the tree, in KiB, with the last sample's breakdown. */
async function sampleRss(pid, samples = 5) {
  const totals = [];
  let last = null;
  for (let i = 0; i < samples; i++) {
    last = treeRss(pid);
    totals.push(last.totalKiB);
    if (i < samples - 1) await sleep(400);
  }
  return { totalKiB: median(totals), processes: last.processes };
}

/** Threads of all the cell processes of an instance. */
const cellThreads = (anvil) => cellsOf(anvil).reduce((s, c) => s + threadCount(c.pid), 0);

const describe = (processes) => processes.map((p) => `${p.name} ${fmt(p.rssKiB / 1024, 1)}`).join(', ');

async function oneRun(index, runs) {
  const result = {};
  for (const size of SIZES) {
    const keys = Array.from({ length: size }, (_, i) => `m-${i}`);
    progress(`memory run ${index + 1}/${runs}: ${size} API(s), deploying at boot`);
    const t0 = performance.now();
    const anvil = await startAnvil({ apis: keys.map((key) => ({ from: 'flow', key })), readyTimeoutMs: 300_000 });
    const bootS = (performance.now() - t0) / 1000;
    try {
      // Deployed, active and public — asked of the management API, since any request to the API
      // itself would start a thread for it.
      const record = await get(anvil.port, `/anvil/api/m-${size - 1}`, {
        host: 'admin.localhost',
        headers: { 'public-host': 'localhost', 'public-host-key': PUBLIC_HOST_KEY },
      });
      if (record.status !== 200 || !/"active":true/.test(record.body) || !/"public":true/.test(record.body))
        throw new Error(`m-${size - 1} is not deployed, active and public: ${record.status} ${record.body}`);
      await sleep(3000);
      const idle = await sampleRss(anvil.pid);
      result[size] = { kib: idle.totalKiB, processes: idle.processes, bootS, threads: cellThreads(anvil) };
      progress(
        `memory run ${index + 1}/${runs}: ${size} API(s) idle: ${fmt(idle.totalKiB / 1024, 1)} MiB (${describe(idle.processes)}), booted in ${fmt(bootS, 1)} s`,
      );
      if (size === SIZES.at(-1)) {
        // Wake all 20 at once (one request each, in parallel), then keep them all busy.
        const t1 = performance.now();
        const first = await Promise.all(
          keys.slice(0, ACTIVE).map((key) => get(anvil.port, `/${key}/ping`, { headers: FLOW_HEADERS })),
        );
        const wakeS = (performance.now() - t1) / 1000;
        const load = Promise.all(
          keys
            .slice(0, ACTIVE)
            .map((key) => closedLoop(anvil.url(`/${key}/ping`), { seconds: 3, headers: FLOW_HEADERS })),
        );
        await sleep(1000);
        const active = await sampleRss(anvil.pid, 3);
        const answers = await load;
        const errors = answers.reduce((s, a) => s + a.errors, 0) + first.filter((r) => r.status !== 200).length;
        const ok = answers.reduce((s, a) => s + a.ok, 0);
        result.active = {
          kib: active.totalKiB,
          processes: active.processes,
          errors,
          ok,
          wakeS,
          threads: cellThreads(anvil),
        };
        progress(
          `memory run ${index + 1}/${runs}: ${ACTIVE} of them active: ${fmt(active.totalKiB / 1024, 1)} MiB (${describe(active.processes)}); woken together in ${fmt(wakeS, 2)} s; ${ok} answers, ${errors} errors`,
        );
      }
      const warnings = anvil.warnings();
      if (warnings) result.warnings = [...(result.warnings ?? []), `${size} APIs: ${warnings}`];
    } finally {
      await anvil.stop();
    }
  }
  return result;
}

export async function run(config) {
  const perRun = [];
  for (let i = 0; i < config.runs; i++) perRun.push(await oneRun(i, config.runs));
  const med = (f) => median(perRun.map(f));
  const largest = SIZES.at(-1);
  const perApi = (size) => med((r) => (r[size].kib - r[1].kib) / (size - 1));
  const above = med((r) => r[largest].kib - r[1].kib);
  const activeAbove = med((r) => r.active.kib - r[largest].kib);
  const rows = SIZES.map((size) => [
    `${size} deployed API${size > 1 ? 's' : ''}, idle`,
    mib(med((r) => r[size].kib) / 1024),
    size === 1 ? '' : mib(med((r) => r[size].kib - r[1].kib) / 1024),
    size === 1 ? '' : kib(perApi(size)),
    `${fmt(
      med((r) => r[size].bootS),
      1,
    )} s`,
  ]);
  rows.push([
    `${largest} deployed, ${ACTIVE} of them active at once`,
    mib(med((r) => r.active.kib) / 1024),
    mib(med((r) => r.active.kib - r[1].kib) / 1024),
    `${kib(activeAbove / ACTIVE)} per active API above ${largest} idle`,
    '',
  ]);
  const lastRun = perRun.at(-1);
  return {
    id: 'memory',
    title: '5. Memory',
    tables: [
      {
        caption: `RSS of the router and all its child processes (median of ${perRun.length} runs)`,
        columns: ['instance', 'RSS', 'above the 1-API instance', 'per API', 'boot (deploys included)'],
        rows,
      },
    ],
    targets: [
      checkTarget({
        name: `idle API memory, per API (${largest} deployed vs 1)`,
        measured: perApi(largest),
        op: '<',
        limit: 200,
        format: kib,
      }),
      checkTarget({
        name: `${largest} idle APIs above the 1-API baseline`,
        measured: above / 1024,
        op: '<',
        limit: 200,
        format: mib,
      }),
    ],
    notes: [
      `Per process, last run (MiB): 1 API: ${describe(lastRun[1].processes)}; ${largest} APIs: ${describe(lastRun[largest].processes)}; ${ACTIVE} active: ${describe(lastRun.active.processes)}.`,
      `Activating: one request to each of the ${ACTIVE} APIs, all sent at once, were all answered after ${fmt(
        med((r) => r.active.wakeS),
        2,
      )} s (${ACTIVE} threads started together); then each of them was sent requests one after the other on its own connection for 3 s (${fmt(med((r) => r.active.ok))} answers in all, median per run; ${perRun.reduce((s, r) => s + r.active.errors, 0)} errors in all runs), RSS sampled from the first second on. Each active API has its own thread(s) (up to --max-threads 2): the cells had ${fmt(med((r) => r.active.threads))} threads (OS threads, all kinds) against ${fmt(med((r) => r[largest].threads))} idle.`,
      'Each API is a copy of bench/apis/flow (before/after, three endpoints, a custom directive, a migration, a Map); "idle" means deployed and public but never called, so no actor thread exists for it.',
      ...perRun.flatMap((r, i) => (r.warnings ?? []).map((w) => `Anvil's log (run ${i + 1}, ${w}).`)),
    ],
    perRun: perRun.map(
      (r, i) =>
        `run ${i + 1}: ${SIZES.map((s) => `${s} → ${fmt(r[s].kib / 1024, 1)} MiB`).join(', ')}, ${ACTIVE} active → ${fmt(r.active.kib / 1024, 1)} MiB`,
    ),
  };
}

standalone(import.meta.url, run);
