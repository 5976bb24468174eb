// The peer of the density benchmark (issue 42): N tenants on workerd, Cloudflare's runtime, set up
// the way Anvil serves N APIs. One Worker per tenant whose fetch() answers {"message":"pong"}, and
// one router Worker, the only one on the socket, holding a service binding per tenant: a request to
// /d0001/pong crosses the router's isolate, then the tenant's (Anvil: the router process, then the
// API's actor). No Worker has network: globalOutbound is a network service that allows nothing.
// workerd is a benchmark-only install (bench/README.md), never a dependency of Anvil.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_DIR, freePort, get, onCleanup, tail } from './instance.mjs';
import { processTree } from './process-tree.mjs';

/** The version bench/README.md installs: the newest on npm that runs here (Node 20, Debian 12 x86_64). */
export const WORKERD_VERSION = '1.20261117.1';
export const WORKERD_INSTALL = `npm install --no-save --no-audit --no-fund --prefix bench/.peers workerd@${WORKERD_VERSION}`;

/** WORKERD_BIN, else the binary of the benchmark-only install under bench/.peers, else null. */
function workerdBinary() {
  const candidates = [
    process.env.WORKERD_BIN,
    join(BENCH_DIR, '.peers/node_modules/@cloudflare/workerd-linux-64/bin/workerd'),
    join(BENCH_DIR, '.peers/node_modules/workerd/bin/workerd'),
  ];
  return candidates.find((path) => path && existsSync(path)) ?? null;
}

/** A compatibility date this binary supports, fixed so that every run gets the same behaviour. */
const COMPATIBILITY_DATE = '2025-01-01';

const TENANT_JS = `export default {
  fetch() {
    return new Response('{"message":"pong"}', { headers: { 'content-type': 'application/json' } });
  },
};
`;

// The binding's name is the path's first segment; env has only the bindings, so hasOwn keeps out
// anything else a path could name.
const ROUTER_JS = `export default {
  fetch(request, env) {
    const path = new URL(request.url).pathname;
    const end = path.indexOf('/', 1);
    const name = end < 0 ? path.slice(1) : path.slice(1, end);
    if (!Object.hasOwn(env, name)) return new Response('no such tenant', { status: 404 });
    return env[name].fetch(request);
  },
};
`;

/** The path of tenant i (1…N): /d0001/pong. */
export const pathFor = (i) => `/d${String(i).padStart(4, '0')}/pong`;
const bindingName = (i) => `d${String(i).padStart(4, '0')}`;

/** The workerd config (Cap'n Proto text) of N tenants behind a router listening on 127.0.0.1:port. */
export function workerdConfig(n, port) {
  const worker = (module, extra = '') =>
    `(modules = [(name = "${module}", esModule = embed "${module}")], compatibilityDate = "${COMPATIBILITY_DATE}", globalOutbound = "nowhere"${extra})`;
  const tenants = [];
  const bindings = [];
  for (let i = 1; i <= n; i++) {
    tenants.push(`    (name = "tenant-${i}", worker = .tenant),`);
    bindings.push(`(name = "${bindingName(i)}", service = "tenant-${i}")`);
  }
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "router", worker = .router),
${tenants.join('\n')}
    (name = "nowhere", network = (allow = [])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "router")],
);

const router :Workerd.Worker = ${worker('router.js', `, bindings = [${bindings.join(', ')}]`)};

const tenant :Workerd.Worker = ${worker('tenant.js')};
`;
}

/**
 * Starts workerd with N tenants on 127.0.0.1:port (a free port when none is given); resolves once
 * tenant 1 answers 200. Returns { url, port, bootMs, pathFor(i), pids(), log(), stop() }; pids() is
 * the workerd process and any descendant (for RSS and thread sums). Throws
 * Error('workerd is not installed: …') when the binary is missing, so a benchmark can skip the peer.
 */
export async function startWorkerdTenants({ n, port, readyTimeoutMs = 30_000 + 100 * n }) {
  const binary = workerdBinary();
  if (binary === null) throw new Error(`workerd is not installed: ${WORKERD_INSTALL} (or set WORKERD_BIN)`);
  port ??= await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'anvil-bench-workerd-'));
  writeFileSync(join(dir, 'config.capnp'), workerdConfig(n, port));
  writeFileSync(join(dir, 'router.js'), ROUTER_JS);
  writeFileSync(join(dir, 'tenant.js'), TENANT_JS);
  const logFile = join(dir, 'workerd.log');
  const fd = openSync(logFile, 'a');
  const began = performance.now();
  const child = spawn(binary, ['serve', 'config.capnp'], { cwd: dir, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = false;
  const exitedPromise = new Promise((resolve) => child.once('exit', () => resolve((exited = true))));
  child.once('error', () => (exited = true));
  const stop = onCleanup(async () => {
    if (!exited) {
      const tree = processTree(child.pid).slice(1);
      child.kill('SIGTERM');
      if ((await Promise.race([exitedPromise, sleep(5000).then(() => false)])) === false) child.kill('SIGKILL');
      await Promise.race([exitedPromise, sleep(2000)]);
      for (const pid of tree) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone with its parent
        }
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const until = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited) {
      const log = tail(logFile);
      await stop();
      throw new Error(`workerd exited while starting ${n} tenant(s):\n${log}`);
    }
    const status = await get(port, pathFor(1)).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (Date.now() > until) {
      const log = tail(logFile);
      await stop();
      throw new Error(
        `workerd with ${n} tenant(s) not answering 200 after ${readyTimeoutMs} ms (last status ${status}):\n${log}`,
      );
    }
    await sleep(50);
  }
  const bootMs = performance.now() - began;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    bootMs,
    pathFor,
    pids: () => processTree(child.pid),
    log: () => tail(logFile),
    stop,
  };
}
