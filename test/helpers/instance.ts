import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request as httpRequest, Agent } from 'undici';
import { waitFor } from './wait-for.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const ANVIL_BIN = join(root, 'bin/anvil.js');
export const TEST_KEY = 'test-public-host-key-0123456789';

/** An API folder as a map of relative path → file content. */
export type ApiFiles = Record<string, string>;

/** An API with one endpoint, `get /ping`, answered by Ping. */
export function pingApi(key: string): ApiFiles {
  return { 'api.yaml': `key: ${key}\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n` };
}

export interface StartOptions {
  /** API folders to deploy at boot: name → files, or a path to copy. */
  apis?: Record<string, ApiFiles | string>;
  publish?: boolean;
  args?: string[];
  env?: Record<string, string>;
  /** Reuse a data dir (restarts). */
  dataDir?: string;
  /** Its own process group, as a terminal gives a command (signal it with `signalGroup`). */
  detached?: boolean;
  /** How long it may take to serve (boot deploys of `apis` included); default 30 s. */
  startTimeoutMs?: number;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json<T = any>(): T;
}

export interface RequestOptions {
  host?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export class TestInstance {
  readonly agent = new Agent({ keepAliveTimeout: 1_000, connections: 256 });
  private exited: Promise<number | null>;

  constructor(
    readonly child: ChildProcess,
    readonly port: number,
    readonly dataDir: string,
    readonly apisDir: string,
    private readonly logs: string[],
  ) {
    this.exited = new Promise((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  }

  get pid(): number {
    return this.child.pid!;
  }

  output(): string {
    return this.logs.join('');
  }

  /** Structured log lines (pino JSON on stdout). */
  logLines(): Array<Record<string, any>> {
    return this.output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
  }

  async request(path: string, options: RequestOptions = {}): Promise<Reply> {
    const send = () =>
      httpRequest(`http://127.0.0.1:${this.port}${path}`, {
        method: (options.method ?? 'GET') as any,
        headers: { host: options.host ?? 'localhost', ...options.headers },
        body: options.body,
        dispatcher: this.agent,
      });
    let response: Awaited<ReturnType<typeof send>>;
    try {
      response = await send();
    } catch (error) {
      // A kept-alive connection the server closed while this process was blocked (a test waiting
      // on spawnSync for a CLI command) is found closed only when reused: a safe method is sent
      // again on a new connection, as HTTP clients do (RFC 9110 §9.2.2).
      const safe = options.method === undefined || options.method === 'GET' || options.method === 'HEAD';
      if (!safe || (error as { code?: string }).code !== 'UND_ERR_SOCKET') throw error;
      response = await send();
    }
    const text = await response.body.text();
    return {
      status: response.statusCode,
      headers: response.headers,
      text,
      json: () => JSON.parse(text),
    };
  }

  /** A request to the admin host with the default public host's credentials. */
  admin(path: string, options: RequestOptions = {}): Promise<Reply> {
    return this.request(path, {
      ...options,
      host: 'admin.localhost',
      headers: { 'public-host': 'localhost', 'public-host-key': TEST_KEY, ...options.headers },
    });
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Signals the instance's whole process group (what Ctrl-C in a terminal does); needs `detached`. */
  signalGroup(signal: NodeJS.Signals): void {
    process.kill(-this.child.pid!, signal);
  }

  waitForExit(): Promise<number | null> {
    return this.exited;
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const code = await this.exited;
    await this.agent.close().catch(() => {});
    return code;
  }

  async dispose(): Promise<void> {
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.stop();
    clearTimeout(timer);
    rmSync(this.dataDir, { recursive: true, force: true });
    rmSync(this.apisDir, { recursive: true, force: true });
  }
}

export function writeApi(dir: string, files: ApiFiles): void {
  for (const [rel, content] of Object.entries(files)) {
    const file = join(dir, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

/**
 * The runtime's default spare threads, for a test that times what a real host does after a change
 * (a first request takes a loaded thread; loading one cold on a loaded CI machine broke such bounds)
 * or that exercises the spares themselves. The other tests keep none (see startInstance).
 */
export const DEFAULT_SPARES = ['--spare-threads', '2'];

/** Starts `anvil start` as a real child process on a free port and waits until it serves. */
export async function startInstance(options: StartOptions = {}): Promise<TestInstance> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'anvil-data-'));
  const apisDir = mkdtempSync(join(tmpdir(), 'anvil-apis-'));
  for (const [name, api] of Object.entries(options.apis ?? {})) {
    if (typeof api === 'string') cpSync(api, join(apisDir, name), { recursive: true });
    else writeApi(join(apisDir, name), api);
  }
  const args = [ANVIL_BIN, 'start', '--port', '0', '--data', dataDir, '--apis', apisDir];
  if (options.publish !== false) args.push('--publish');
  // A test's own --drain-delay and --spare-threads (later in the list) win; the balancer's grace
  // second is not needed elsewhere, and without spare threads an instance's start costs half the
  // CPU: a spare, and the one started again after each is taken, were most of it (docs/operate.md,
  // "Spare threads"). An API's first request then starts its thread.
  args.push('--drain-delay', '0', '--spare-threads', '0');
  args.push(...(options.args ?? []));
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ANVIL_PUBLIC_HOST_KEY: TEST_KEY, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  const logs: string[] = [];
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`instance did not start in time:\n${logs.join('')}`)),
      options.startTimeoutMs ?? 30_000,
    );
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      logs.push(chunk.toString());
      buffered += chunk.toString();
      const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(buffered);
      if (match) {
        clearTimeout(timer);
        resolvePort(Number(match[1]));
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`instance exited with ${code} before serving:\n${logs.join('')}`));
    });
  });
  return new TestInstance(child, port, dataDir, apisDir, logs);
}

/** Polls until `check` returns a truthy value (or throws after `timeoutMs`); `waitFor` also names what it waits for. */
export function eventually<T>(check: () => T | Promise<T>, timeoutMs = 10_000, everyMs = 50): Promise<NonNullable<T>> {
  return waitFor(check, { what: 'a condition', timeoutMs, everyMs });
}
