// Starting and stopping what the benchmarks measure: Anvil instances (a temp data dir and a temp
// --apis dir made from bench/apis/), the reference servers, and their process trees. Everything
// started here is registered and torn down by cleanupAll(), which run.mjs (and each benchmark run
// on its own) calls in `finally` and on SIGINT/SIGTERM: no process or temp dir is left behind.
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  closeSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

export const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
export const ROOT = dirname(BENCH_DIR);
/** The key of the default public host (ANVIL_PUBLIC_HOST_KEY) of every instance started here. */
export const PUBLIC_HOST_KEY = 'bench-public-host-key-0123456789';
/** The api-key header the bench APIs' CheckKey expects (bench/apis/flow/Maps/main.json). */
export const API_KEY = 'bench-api-key-0123456789';
/** Headers of a request through the full flow: the key, and a correlation id to propagate. */
export const FLOW_HEADERS = { 'api-key': API_KEY, 'x-correlation-id': 'bench-correlation-0001' };

const cleanups = new Set();

/** Registers a cleanup; returns a function that runs it once and unregisters it. */
export function onCleanup(fn) {
  let done = false;
  const run = async () => {
    if (done) return;
    done = true;
    cleanups.delete(run);
    await fn();
  };
  cleanups.add(run);
  return run;
}

/** Stops every process and removes every temp dir still registered. */
export async function cleanupAll() {
  for (const run of [...cleanups].reverse()) {
    try {
      await run();
    } catch {
      // keep cleaning
    }
  }
}

let signalsHooked = false;
let signalled = false;
/** True once SIGINT/SIGTERM arrived: what still runs is being torn down, not measured. */
export const interrupted = () => signalled;

/** On SIGINT/SIGTERM: clean up, then exit 130. */
export function cleanupOnSignals() {
  if (signalsHooked) return;
  signalsHooked = true;
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      signalled = true;
      process.stderr.write(`\nbench: ${signal}, cleaning up…\n`);
      cleanupAll().finally(() => process.exit(130));
    });
  }
}

/** A temp dir, removed at cleanup. */
export function tempDir(prefix = 'anvil-bench-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A TCP port free right now on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Writes the API folders of `specs` into `dir`: each spec is { from: <folder of bench/apis>, key?,
 * maps?: { main: {...} } } — a copy of bench/apis/<from> deployed under `key` (its `key:` line
 * rewritten) with `maps.main` merged into its Maps/main.json. `from` may also be an absolute path
 * (an example of apis/, say).
 */
export function writeApis(dir, specs) {
  for (const spec of specs) {
    const key = spec.key ?? basename(spec.from);
    const target = join(dir, key);
    cpSync(isAbsolute(spec.from) ? spec.from : join(BENCH_DIR, 'apis', spec.from), target, { recursive: true });
    if (key !== basename(spec.from)) {
      const yamlPath = join(target, 'api.yaml');
      const yaml = readFileSync(yamlPath, 'utf8');
      if (!/^key: .*$/m.test(yaml)) throw new Error(`bench/apis/${spec.from}/api.yaml has no top-level "key:" line`);
      writeFileSync(yamlPath, yaml.replace(/^key: .*$/m, `key: ${key}`));
    }
    if (spec.maps?.main) {
      const mapPath = join(target, 'Maps', 'main.json');
      const current = existsSync(mapPath) ? JSON.parse(readFileSync(mapPath, 'utf8')) : {};
      mkdirSync(dirname(mapPath), { recursive: true });
      writeFileSync(mapPath, JSON.stringify({ ...current, ...spec.maps.main }));
    }
  }
}

/** Spawns `node <args>` with stdout/stderr to `logFile`; registers its tree for cleanup. */
function spawnNode(args, { env = {}, logFile, cwd = ROOT }) {
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = false;
  const exitedPromise = new Promise((resolve) =>
    child.once('exit', (code, signal) => ((exited = true), resolve({ code, signal }))),
  );
  const stop = onCleanup(async () => {
    if (exited) return;
    const tree = descendants(child.pid).map((pid) => ({ pid, started: startTime(pid) }));
    child.kill('SIGTERM');
    const result = await Promise.race([exitedPromise, sleep(8000).then(() => null)]);
    if (result === null) child.kill('SIGKILL');
    await Promise.race([exitedPromise, sleep(2000)]);
    // Processes of the tree that outlived their parent (they should not), by pid — if that pid
    // is still the same process (same start time), not a new one that reused the number.
    for (const { pid, started } of tree) {
      if (started === null || startTime(pid) !== started) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  return { child, stop, isExited: () => exited, exited: exitedPromise };
}

/** The last `lines` lines of a file ('' when missing). */
export function tail(file, lines = 30) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * What an instance logged at warn level or above (JSON lines of pino), grouped by message:
 * '' when nothing, else e.g. `12 lines at warn or above: 6× "directive error" (Pong used …), …`.
 */
export function logSummary(file) {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return '';
  }
  const groups = new Map();
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (!(entry.level >= 40)) continue;
    total++;
    const key = `${entry.level >= 50 ? 'error' : 'warn'} "${entry.msg}"`;
    const group = groups.get(key) ?? { count: 0, example: entry.message ?? entry.error ?? entry.err?.message ?? '' };
    group.count++;
    groups.set(key, group);
  }
  if (total === 0) return '';
  const parts = [...groups].map(
    ([key, g]) => `${g.count}× ${key}${g.example ? ` (e.g. ${String(g.example).slice(0, 120)})` : ''}`,
  );
  return `${total} line(s) at warn or above: ${parts.join('; ')}`;
}

/** Polls `check()` (async, true when ready) every 100 ms until `timeoutMs`; fails if `dead()`. */
async function waitFor(what, check, { timeoutMs, dead, log }) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (dead()) throw new Error(`${what} exited while starting:\n${tail(log)}`);
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms:\n${tail(log)}`);
}

/** GET on 127.0.0.1:port with a Host header; resolves { status, body }. */
export function get(port, path, { host = 'localhost', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      let head = `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n`;
      for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
      socket.write(`${head}\r\n`);
    });
    socket.on('data', (d) => (data += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(data.slice(9, 12));
      const at = data.indexOf('\r\n\r\n');
      resolve({ status, head: data.slice(0, at), body: at < 0 ? '' : data.slice(at + 4) });
    });
  });
}

/**
 * Starts an Anvil instance: `apis` (specs for writeApis) deployed at boot and made public, on a
 * free port (or `port`), with a fresh data dir. `args` are more `anvil start` options, `nodeArgs` the
 * router's Node flags; `env` more environment.
 * `beforeStart(dataDir)` may prepare the data dir (e.g. add hosts). Resolves once
 * GET /anvil/health on the admin host answers 200 (and, if given, `readyPath` answers 200).
 */
export async function startAnvil({
  apis,
  args = [],
  nodeArgs = [],
  env = {},
  port: chosenPort,
  readyTimeoutMs = 60_000,
  beforeStart,
  readyPath,
  readyHeaders,
}) {
  const apisDir = tempDir();
  const dataDir = tempDir();
  const logFile = join(dataDir, 'bench-instance.log');
  writeApis(apisDir, apis);
  if (beforeStart) await beforeStart(dataDir);
  const port = chosenPort ?? (await freePort());
  const proc = spawnNode(
    [
      ...nodeArgs,
      'bin/anvil.js',
      'start',
      '--apis',
      apisDir,
      '--publish',
      '--data',
      dataDir,
      '--port',
      String(port),
      '--drain-timeout',
      '2s',
      ...args,
    ],
    { env: { ANVIL_LOG_LEVEL: 'warn', ANVIL_PUBLIC_HOST_KEY: PUBLIC_HOST_KEY, NO_COLOR: '1', ...env }, logFile },
  );
  const instance = {
    port,
    pid: proc.child.pid,
    dataDir,
    apisDir,
    logFile,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    stop: proc.stop,
    isExited: proc.isExited,
    log: () => tail(logFile),
    /** Warnings and errors it logged so far, summarized ('' when none). */
    warnings: () => logSummary(logFile),
  };
  const dead = () => proc.isExited();
  await waitFor('anvil', async () => (await get(port, '/anvil/health', { host: 'admin.localhost' })).status === 200, {
    timeoutMs: readyTimeoutMs,
    dead,
    log: logFile,
  });
  if (readyPath)
    await waitFor(
      `anvil ${readyPath}`,
      async () => (await get(port, readyPath, { headers: readyHeaders })).status === 200,
      { timeoutMs: 20_000, dead, log: logFile },
    );
  return instance;
}

/** Runs `node bin/anvil.js <args>` to completion (e.g. `hosts add-admin`); throws on failure. */
export function anvilCli(args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/anvil.js', ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`anvil ${args.join(' ')} failed (${code}): ${out}`)),
    );
  });
}

/**
 * Starts a reference server: `node bench/<script> <port> …extraArgs`; resolves once `readyPath`
 * answers (any status).
 */
export async function startServer(script, { extraArgs = [], readyPath = '/', env = {} } = {}) {
  const dir = tempDir();
  const logFile = join(dir, 'server.log');
  const port = await freePort();
  const proc = spawnNode([join(BENCH_DIR, script), String(port), ...extraArgs], { env, logFile });
  await waitFor(script, async () => (await get(port, readyPath)).status > 0, {
    timeoutMs: 20_000,
    dead: () => proc.isExited(),
    log: logFile,
  });
  return {
    port,
    pid: proc.child.pid,
    dir,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    stop: proc.stop,
    log: () => tail(logFile),
  };
}

/** Parent pid of every process: Map pid → ppid (from /proc/<pid>/stat). */
function parents() {
  const map = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      map.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone
    }
  }
  return map;
}

/** The start time of a process (field 22 of /proc/<pid>/stat), or null when it is gone. */
function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return null;
  }
}

/** Every descendant pid of `pid` (not `pid` itself). */
export function descendants(pid) {
  const ppids = parents();
  const out = [];
  const walk = (p) => {
    for (const [child, parent] of ppids) {
      if (parent === p) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return out;
}

const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((path) => existsSync(path)) ?? null;

/**
 * Confines every thread of the processes `pids` to the CPUs `cpus` (a list such as "0") with
 * taskset; returns a function that gives each its CPUs back, or null without taskset.
 */
export function confine(pids, cpus) {
  if (TASKSET === null) return null;
  const own = new Map();
  for (const pid of pids) {
    try {
      own.set(pid, /list: (\S+)/.exec(execFileSync(TASKSET, ['-c', '-p', String(pid)], { encoding: 'utf8' }))[1]);
      execFileSync(TASKSET, ['-a', '-c', '-p', cpus, String(pid)], { stdio: 'ignore' });
    } catch {
      // the process ended
    }
  }
  return () => {
    for (const [pid, list] of own) {
      try {
        execFileSync(TASKSET, ['-a', '-c', '-p', list, String(pid)], { stdio: 'ignore' });
      } catch {
        // the process ended
      }
    }
  };
}

/** The command name of a process and its resident memory (VmRSS) in KiB, or null when gone. */
function processMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const script = cmdline.find((a) => a.endsWith('.js') || a.endsWith('.mjs')) ?? cmdline[0] ?? '?';
    const cell = cmdline.includes('--cell') ? ` cell ${cmdline[cmdline.indexOf('--cell') + 1]}` : '';
    return { pid, name: `${script.split('/').pop()}${cell}`, rssKiB: rss };
  } catch {
    return null;
  }
}

/** RSS of a process and all its descendants: { totalKiB, processes: [{ pid, name, rssKiB }] }. */
export function treeRss(pid) {
  const processes = [pid, ...descendants(pid)].map(processMemory).filter(Boolean);
  return { totalKiB: processes.reduce((a, p) => a + p.rssKiB, 0), processes };
}

/** Cell processes of an instance: [{ pid, cell }]. */
export function cellsOf(instance) {
  return descendants(instance.pid)
    .map((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const at = args.indexOf('--cell');
        return at < 0 ? null : { pid, cell: Number(args[at + 1]) };
      } catch {
        return null;
      }
    })
    .filter(Boolean);
}

/** Number of threads of a process (from /proc/<pid>/task). */
export function threadCount(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return 0;
  }
}
