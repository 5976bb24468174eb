// Issue 20's tail, attributed: which threads of the machine ran while the full flow's slow requests
// were waiting. Starts Anvil, loads GET /flow/ping at 50 % of its measured maximum with the open-loop
// generator (first BENCH_TAIL_SETTLE seconds, default 20, unrecorded, so that start-up work is over),
// then records the scheduler (`perf sched record`, CLOCK_MONOTONIC, as process.hrtime) for
// BENCH_SECONDS while the same load goes on, each request's start and latency kept.
//
// A stall is a run of slow requests (over BENCH_TAIL_SLOW_MS, default 2) that fell due within 3 ms of
// each other, at least 20 of them: the episodes that make the p99 (a lone slow request does not).
// For the 6 ms around each stall's start, and for the whole window, every thread's time on a CPU
// is summed by role (the router's main thread, a cell's API threads, the processes' other threads —
// V8's and libuv's —, the load generator, other processes by name), and the time it spent runnable
// but waiting for a CPU. A role that runs far more during stalls than overall is what they are made of.
//
// Not part of `npm run bench` (the recording costs CPU too); needs `perf` (Debian: linux-perf) and
// root or perf_event_paranoid ≤ 0:
//   npm run build && node bench/tail-episodes.mjs
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { progress, standalone } from './lib/config.mjs';
import { TICKS, threadTicks } from './lib/cpu.mjs';
import { FLOW_HEADERS, cellsOf, descendants, startAnvil, tempDir } from './lib/instance.mjs';
import { openLoop, saturate } from './lib/load.mjs';
import { summarize } from './lib/stats.mjs';
import { fmt } from './lib/targets.mjs';

const SETTLE_S = Number(process.env.BENCH_TAIL_SETTLE ?? 20);
const SLOW_MS = Number(process.env.BENCH_TAIL_SLOW_MS ?? 2);
/** Slow requests closer than this (by when they fell due) belong to one stall. */
const JOIN_MS = 3;
const STALL_MIN_REQUESTS = 20;
/** The window around a stall's start that is attributed to it. */
const BEFORE_MS = 3;
const AFTER_MS = 3;
/** A cell's thread busier than this share of the window is one of its API threads. */
const API_THREAD_SHARE = 0.05;

export async function run(config) {
  if (spawnSync('perf', ['--version']).error)
    throw new Error('tail-episodes needs perf (Debian: apt-get install linux-perf)');
  const anvil = await startAnvil({ apis: [{ from: 'flow' }], args: ['--idle-timeout', '10m'] });
  const url = anvil.url('/flow/ping');
  progress('tail-episodes: warm-up and maximum');
  await saturate(url, { seconds: 2, connections: config.connections, headers: FLOW_HEADERS });
  const max = await saturate(url, { seconds: config.seconds, connections: config.connections, headers: FLOW_HEADERS });
  const rate = Math.round(max.rps / 2);
  progress(`tail-episodes: ${rate} req/s for ${SETTLE_S} s unrecorded, then ${config.seconds} s under perf sched`);
  await openLoop(url, { rate, seconds: SETTLE_S, warmup: 0, headers: FLOW_HEADERS });

  const processes = labelProcesses(anvil);
  const before = threadTimes(processes);
  const dir = tempDir('anvil-tail-');
  const data = join(dir, 'sched.data');
  const perf = spawn(
    'perf',
    ['sched', 'record', '-k', 'CLOCK_MONOTONIC', '-o', data, '--', 'sleep', String(config.seconds + 1.5)],
    { stdio: 'ignore' },
  );
  const perfDone = new Promise((resolve) => perf.on('close', resolve));
  await new Promise((resolve) => setTimeout(resolve, 500));
  // performance.now() → CLOCK_MONOTONIC ms (process.hrtime is libuv's monotonic clock, perf's -k).
  const monoAt = Number(process.hrtime.bigint()) / 1e6 - performance.now();
  const requests = [];
  const load = await openLoop(url, {
    rate,
    seconds: config.seconds,
    warmup: 0,
    headers: FLOW_HEADERS,
    onRequest: (at, latency) => requests.push([monoAt + at, latency]),
  });
  const after = threadTimes(processes);
  const perfExit = await perfDone;
  if (perfExit !== 0)
    throw new Error(`perf sched record exited with ${perfExit} (it needs root or kernel.perf_event_paranoid ≤ 0)`);
  if (requests.length === 0) throw new Error(`no request was recorded at ${rate} req/s: ${JSON.stringify(load)}`);
  const timehist = spawnSync('perf', ['sched', 'timehist', '-i', data], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (timehist.status !== 0)
    throw new Error(`perf sched timehist failed (${timehist.status}): ${timehist.stderr ?? timehist.error}`);
  const timeline = timehist.stdout;
  rmSync(dir, { recursive: true, force: true });
  await anvil.stop();

  requests.sort((a, b) => a[0] - b[0]);
  const from = requests[0][0];
  const to = requests.at(-1)[0];
  const roles = roleOfThread(processes, before, after, to - from);
  const stalls = findStalls(requests);
  const windows = stalls.map((s) => [s.at - BEFORE_MS, s.at + AFTER_MS]);
  const windowMs = windows.length * (BEFORE_MS + AFTER_MS);
  const byRole = new Map();
  for (const slice of parseTimehist(timeline)) {
    if (slice.end < from || slice.end - slice.run > to) continue;
    const role = roles.get(slice.tid) ?? `other process: ${slice.name.replace(/[/:].*$/, '')}`;
    const r = byRole.get(role) ?? { overall: 0, inStalls: 0, waitedInStalls: 0, maxWait: 0 };
    byRole.set(role, r);
    r.overall += Math.min(slice.end, to) - Math.max(slice.end - slice.run, from);
    for (const [a, b] of windows) {
      r.inStalls += Math.max(0, Math.min(slice.end, b) - Math.max(slice.end - slice.run, a));
      const wokeAt = slice.end - slice.run;
      if (wokeAt >= a && wokeAt <= b) {
        r.waitedInStalls += slice.delay;
        r.maxWait = Math.max(r.maxWait, slice.delay);
      }
    }
  }
  const span = to - from;
  const rows = [...byRole]
    .map(([role, r]) => ({
      role,
      stalls: windowMs ? r.inStalls / windowMs : 0,
      overall: r.overall / span,
      waited: r.waitedInStalls,
      maxWait: r.maxWait,
    }))
    .filter((r) => r.stalls >= 0.005 || r.overall >= 0.005)
    .sort((a, b) => b.stalls - a.stalls)
    .map((r) => [
      r.role,
      `${fmt(100 * r.stalls, 1)} %`,
      `${fmt(100 * r.overall, 1)} %`,
      r.overall > 0 ? `${fmt(r.stalls / r.overall, 1)}×` : '—',
      `${fmt(r.waited, 1)} ms (max ${fmt(r.maxWait, 2)})`,
    ]);
  const latency = summarize(requests.map((r) => r[1]));
  const slow = requests.filter((r) => r[1] > SLOW_MS).length;
  const inStalls = stalls.reduce((a, s) => a + s.requests, 0);
  return {
    id: 'tail-episodes',
    title: 'The p99 tail at half load, attributed to the threads that ran (bench/tail-episodes.mjs)',
    summary: [
      `${fmt(rate)} req/s on GET /flow/ping for ${config.seconds} s after ${SETTLE_S} s at that rate: p50 ${fmt(latency.p50, 2)} ms, p99 ${fmt(latency.p99, 2)} ms, max ${fmt(latency.max, 2)} ms, errors ${load.errors}`,
      `${fmt(slow)} requests over ${SLOW_MS} ms (${fmt((100 * slow) / requests.length, 2)} %), ${fmt(inStalls)} of them in ${stalls.length} stalls of ${STALL_MIN_REQUESTS} or more (${fmt(stalls.length / config.seconds, 1)} a second)`,
    ],
    tables: [
      {
        caption: `CPU time by thread role in the ${BEFORE_MS + AFTER_MS} ms around each stall's start and over the whole window (100 % = one core), and the time the role's threads spent runnable but waiting for a CPU in those stall windows`,
        columns: ['threads', 'CPU during stalls', 'CPU overall', 'stalls ÷ overall', 'waited for a CPU during stalls'],
        rows,
      },
    ],
  };
}

/** pid → label: the router, each cell (with the number the router gave it), the deploy worker, this process (the load generator). */
function labelProcesses(anvil) {
  const labels = new Map([
    [anvil.pid, 'router'],
    [process.pid, 'load generator'],
  ]);
  for (const { pid, cell } of cellsOf(anvil)) labels.set(pid, `cell ${cell}`);
  for (const pid of descendants(anvil.pid)) {
    if (labels.has(pid)) continue;
    const cmd = safeRead(`/proc/${pid}/cmdline`);
    labels.set(
      pid,
      cmd.includes('deploy-worker') ? 'deploy worker' : (cmd.split('\0')[0].split('/').at(-1) ?? `pid ${pid}`),
    );
  }
  return labels;
}

/** tid → { pid, ticks }: CPU time of every thread of those processes. */
function threadTimes(processes) {
  const times = new Map();
  for (const pid of processes.keys()) {
    for (const [tid, { ticks }] of threadTicks(pid).threads) times.set(Number(tid), { pid, ticks });
  }
  return times;
}

/** tid → role: each process's main thread; a cell's busy threads are its API threads; the rest its other threads. */
function roleOfThread(processes, before, after, spanMs) {
  const roles = new Map();
  for (const [tid, { pid, ticks }] of after) {
    const label = processes.get(pid);
    const busy = ((ticks - (before.get(tid)?.ticks ?? ticks)) * 1000) / TICKS / spanMs;
    if (tid === pid) roles.set(tid, `${label}: main thread`);
    else if (label.startsWith('cell') && busy >= API_THREAD_SHARE) roles.set(tid, `${label}: API threads`);
    else roles.set(tid, `${label}: other threads (V8, libuv)`);
  }
  return roles;
}

/** Runs of slow requests whose start times are within JOIN_MS of each other, the big ones only. */
function findStalls(requests) {
  const stalls = [];
  let current = null;
  for (const [at, latency] of requests) {
    if (latency <= SLOW_MS) continue;
    if (current !== null && at - current.last <= JOIN_MS) {
      current.last = at;
      current.requests++;
    } else {
      current = { at, last: at, requests: 1 };
      stalls.push(current);
    }
  }
  return stalls.filter((s) => s.requests >= STALL_MIN_REQUESTS);
}

/**
 * `perf sched timehist` lines: "time [cpu] name[tid/pid] wait delay run" — a thread leaving a CPU at
 * `time` (s) after running `run` ms, having waited `delay` ms runnable before that. Times in ms.
 */
function parseTimehist(text) {
  const slices = [];
  const line = /^\s*([\d.]+)\s+\[(\d+)\]\s+(.*?)\[(\d+)(?:\/\d+)?\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)/;
  for (const row of text.split('\n')) {
    const m = line.exec(row);
    if (m === null) continue;
    slices.push({
      end: Number(m[1]) * 1000,
      name: m[3].trim(),
      tid: Number(m[4]),
      delay: Number(m[6]),
      run: Number(m[7]),
    });
  }
  return slices;
}

function safeRead(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

standalone(import.meta.url, run);
