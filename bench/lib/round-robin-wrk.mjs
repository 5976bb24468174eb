// Load spread over many tenants: each request goes to the next of `paths`, round robin, so that all
// N tenants are active at once (issue 42's density benchmark, Anvil and workerd alike).
// - Saturated (no `rate`): wrk with a generated Lua script whose request() returns the next path's
//   request, prebuilt once per wrk thread (each thread keeps its own turn). p50/p99 from --latency.
// - Fixed rate (`rate` req/s, for the half-load figures): wrk has no rate and Debian ships no wrk2,
//   so load.mjs's open-loop generator on raw keep-alive sockets sends them, round robin too. It
//   charges the time a due request waits for a free connection to the server (no coordinated
//   omission), and costs less CPU per request than undici would on this 2-core machine.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLoop, runWrk, wrkHeaders } from './load.mjs';

/** The Lua script: the requests of `paths`, prebuilt in init(), returned in turn by request(). */
function luaScript(paths) {
  const list = paths.map((path) => JSON.stringify(path)).join(',\n  ');
  return `local paths = {
  ${list}
}
local requests = {}
local turn = 0

function init(args)
  for i, path in ipairs(paths) do
    requests[i] = wrk.format("GET", path)
  end
end

function request()
  turn = turn % #requests + 1
  return requests[turn]
end
`;
}

async function roundRobinWrk(url, { paths, seconds, connections, threads, host, headers }) {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-bench-wrk-'));
  const script = join(dir, 'round-robin.lua');
  writeFileSync(script, luaScript(paths));
  try {
    const figures = await runWrk([
      `-t${threads}`,
      `-c${connections}`,
      `-d${seconds}s`,
      '--latency',
      '-s',
      script,
      ...wrkHeaders(host, headers),
      url,
    ]);
    return {
      tool: 'wrk',
      requests: figures.requests,
      rps: figures.rps,
      p50Ms: figures.p50,
      p99Ms: figures.p99,
      errors: figures.errors,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * GET `paths` of `url` round robin for `seconds`: saturated over `connections` (wrk, `threads`
 * threads), or at `rate` req/s when given (open loop, after `warmup` s at that rate not recorded).
 * Returns { tool, requests, rps, p50Ms, p99Ms, errors } (errors: non-2xx + socket errors, and at a
 * fixed rate the requests still unanswered 10 s after the last fell due).
 */
export async function roundRobinLoad({
  url,
  paths,
  seconds,
  connections = 50,
  threads = 1,
  rate,
  warmup = 1,
  host,
  headers = {},
}) {
  if (!Array.isArray(paths) || paths.length === 0) throw new Error('roundRobinLoad needs at least one path');
  const base = new URL(url);
  host ??= base.host;
  if (rate === undefined) return roundRobinWrk(base.origin, { paths, seconds, connections, threads, host, headers });
  const result = await openLoop(base.origin, { rate, seconds, warmup, connections, host, headers, paths });
  return {
    tool: 'open loop',
    requests: result.sent,
    rps: result.rate,
    p50Ms: result.p50,
    p99Ms: result.p99,
    errors: result.errors,
  };
}
