// Issue 42: what a shared actor thread spends on one request when N tenants are all active, without
// its sockets. bench/apis/pong is deployed once by a real instance; its compiled release is then
// loaded here N times, as N actors of one shared thread each load theirs (an ActorRuntime, a
// sandbox — its own isolate — and an ApiEngine each), and requests go to each tenant in turn,
// round robin, through what the thread does with them (request frame decoded, ApiEngine.handle,
// response frame encoded). Reported per N (BENCH_DENSITY_ENGINE_SIZES, default 1,10,100): CPU of
// this process per request over BENCH_DENSITY_ENGINE_REQUESTS requests (default 50 000) spread over
// the N, after as many to warm up — as a saturated thread's requests are spread: at N = 100 each
// tenant's isolate runs 500 calls, and V8 may not have optimized its code yet.
//
// Not part of `npm run bench` (it measures a part); run it on its own to compare builds:
//   npm run build && node bench/density-engine.mjs
import './lib/cell-flags.mjs';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorRuntime } from '../dist/cell/actors/actor-runtime.js';
import { createSandbox } from '../dist/cell/actors/sandbox-setup.js';
import { builtinDirectives } from '../dist/directives/catalogue.js';
import { ApiEngine } from '../dist/engine/api-engine.js';
import { prepareParamChecks } from '../dist/engine/param-check.js';
import { DEFAULT_QUOTAS } from '../dist/shared/quotas/api-quotas.js';
import { decodeRequest, encodeRequestHead, encodeResponse } from '../dist/shared/protocol/requests.js';
import { progress, standalone } from './lib/config.mjs';
import { findFile } from './lib/find-file.mjs';
import { startAnvil } from './lib/instance.mjs';
import { median } from './lib/stats.mjs';
import { fmt } from './lib/targets.mjs';

const SIZES = (process.env.BENCH_DENSITY_ENGINE_SIZES ?? '1,10,100').split(',').map(Number);
const REQUESTS = Number(process.env.BENCH_DENSITY_ENGINE_REQUESTS ?? 50_000);
const AT_ONCE = 10;
const HEADERS = ['host', 'localhost', 'user-agent', 'wrk'];
const LIMITS = { memoryMb: 128, cpuMs: 50, wallMs: 30_000 };

export async function run(config) {
  const pong = await deployedPong();
  prepareParamChecks(builtinDirectives);
  // The thread's own code optimized first, as in a thread that has served a while.
  const warm = openTenant(pong, -1);
  await measure([warm], REQUESTS);
  await warm.close();
  const perRun = [];
  for (let r = 0; r < config.runs; r++) {
    const result = {};
    for (const n of SIZES) {
      const tenants = Array.from({ length: n }, (_, i) => openTenant(pong, i));
      try {
        await measure(tenants, REQUESTS); // warm-up
        result[n] = await measure(tenants, REQUESTS);
      } finally {
        await Promise.all(tenants.map((tenant) => tenant.close()));
      }
      progress(`density-engine run ${r + 1}/${config.runs}: ${n} tenant(s): ${fmt(result[n], 2)} µs CPU per request`);
    }
    perRun.push(result);
  }
  const first = median(perRun.map((r) => r[SIZES[0]]));
  const rows = SIZES.map((n) => {
    const us = median(perRun.map((r) => r[n]));
    return [String(n), `${fmt(us, 2)} µs`, `${fmt(us / first, 2)}×`];
  });
  return {
    id: 'density-engine',
    title: "A shared thread's work per request with N tenants active, in-process (bench/density-engine.mjs)",
    tables: [
      {
        caption: `CPU of the process per request, ${fmt(REQUESTS)} requests spread over the tenants after as many to warm up, median of ${perRun.length} run(s)`,
        columns: ['tenants', 'CPU per request', `÷ ${SIZES[0]} tenant(s)`],
        rows,
      },
    ],
    perRun: perRun.map((r, i) => `run ${i + 1}: ${SIZES.map((n) => `${n}: ${fmt(r[n], 2)} µs`).join(', ')}`),
  };
}

/** bench/apis/pong as a real instance compiles it. */
async function deployedPong() {
  const anvil = await startAnvil({ apis: [{ from: 'pong' }] });
  let compiledFile;
  try {
    compiledFile = findFile(anvil.dataDir, 'compiled.json');
  } finally {
    await anvil.stop();
  }
  if (compiledFile === undefined) throw new Error('pong was deployed, but no compiled.json was found');
  const release = JSON.parse(readFileSync(compiledFile, 'utf8'));
  const releaseDir = ['files', '.']
    .map((d) => join(compiledFile, '..', d))
    .find((d) => existsSync(join(d, 'api.yaml')));
  return { release, releaseDir, compiledFile };
}

/** Tenant `i`: the release loaded as an actor loads it, with a data dir of its own. */
function openTenant({ release, releaseDir, compiledFile }, i) {
  const dataDir = mkdtempSync(join(tmpdir(), 'anvil-density-engine-'));
  const key = `pong-${i}`;
  const spec = {
    id: `localhost/dev/${key}@bench`,
    key,
    host: 'localhost',
    env: 'dev',
    release: release.release,
    releaseDir,
    compiledFile,
    dataDir,
    localBaseUrl: 'http://localhost:0',
    sandbox: { maxima: LIMITS },
    quotas: DEFAULT_QUOTAS,
    stores: { dataRoot: dataDir, redisUrl: null, redisPrefix: `bench-${i}`, databaseUrl: null },
    egressAllow: null,
    maxJsonDepth: 64,
  };
  const runtime = new ActorRuntime(spec, release, () => {});
  const sandbox = createSandbox(release, LIMITS, (event) => {
    throw new Error(`breach during the benchmark: ${event.message}`);
  });
  const custom = sandbox?.directives() ?? new Map();
  const engine = new ApiEngine(
    release,
    runtime,
    (name) => builtinDirectives.get(name) ?? custom.get(name),
    (event) => {
      throw new Error(`error during the benchmark: ${JSON.stringify(event)}`);
    },
  );
  return {
    engine,
    close: async () => {
      sandbox?.close();
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `requests` requests, to each tenant in turn, AT_ONCE at a time: CPU µs per request. */
async function measure(tenants, requests) {
  let last = null;
  const one = (n) => {
    const head = encodeRequestHead(n, {
      id: `bench-${n}`,
      verb: 'GET',
      path: '/pong',
      rawQuery: '',
      rawHeaders: HEADERS,
      ip: '127.0.0.1',
      hop: 0,
      viaBus: false,
      receivedAt: Date.now(),
      body: null,
    });
    const { number, request } = decodeRequest(head.subarray(5));
    return tenants[n % tenants.length].engine.handle(request, (response) => {
      last = encodeResponse(number, response);
    });
  };
  const before = process.cpuUsage();
  for (let n = 0; n < requests; n += AT_ONCE) {
    const pending = [];
    for (let i = 0; i < AT_ONCE && n + i < requests; i++) pending.push(one(n + i));
    await Promise.all(pending);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const used = process.cpuUsage(before);
  // [u32 length][u8 type][u32 number][u16 status]…
  if (last === null || last.readUInt16LE(9) !== 200)
    throw new Error(`GET /pong did not answer 200: ${last?.toString('latin1')}`);
  return (used.user + used.system) / requests;
}

standalone(import.meta.url, run);
