/**
 * One API folder run in this process for its tests, on the real engine, built-ins and sandbox:
 * compiled once per env as a deploy compiles it, then, for each case, a fresh actor — its own
 * data dir (database and key space), isolate, clock and mocks — that the case's requests go
 * through as a thread runs them, without sockets.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import { createSandbox } from '../cell/actors/sandbox-setup.js';
import { CELL_V8_FLAGS } from '../cell/process/cell-supervisor.js';
import { DEFAULT_BUS_CALLS_PER_REQUEST } from '../engine/call-budget.js';
import { loadApiFolder } from '../deploy/api-yaml/load-api.js';
import { formatConfigError, type CompiledRelease } from '../shared/api-model/types.js';
import { apiDatabase } from '../directives/database/api-database.js';
import { checkSqlText } from '../directives/database/sql-checks.js';
import { builtinDirectives } from '../directives/catalogue.js';
import { ApiEngine } from '../engine/api-engine.js';
import { prepareParamChecks } from '../engine/param-check.js';
import { DEFAULT_MAX_JSON_DEPTH } from '../shared/http/json-depth.js';
import type { ActorSpec } from '../shared/protocol/cell-messages.js';
import type { EngineRequest } from '../shared/protocol/requests.js';
import { DEFAULT_QUOTAS, type ApiQuotas } from '../shared/quotas/api-quotas.js';
import { dataKey } from '../directives/stores/api-keys.js';
import { mergedMaps, type Fixtures, type Mocks, type TestRequest } from './test-file.js';
import {
  answerCollector,
  TestRuntime,
  type AnsweredRequest,
  type Clock,
  type OwnHandler,
  type PeerLookup,
} from './test-runtime.js';

/** The instance's defaults for the limits an API may ask for (`anvil start --max-*`). */
const SANDBOX_MAXIMA = { memoryMb: 256, cpuMs: 1_000, wallMs: 30_000 };
/** What `$.memory.anvil-localhost` is under test: Pull, Push and Http to it go to the API itself or to mocks.apis. */
export const TEST_BASE_URL = 'http://anvil.test';
let prepared = false;

/** The actor of one case: send its requests, then close it. */
export interface CaseActor {
  runtime: TestRuntime;
  /** Runs a request as its thread would (the bus's calls to this API come here too), AFTER_FLOW included. */
  handle: OwnHandler;
  /** Runs a request: `answer` once the engine sends it (before the AFTER_FLOW pass, as a thread answers), `done` when the flow has finished. */
  respond(request: EngineRequest): { answer: Promise<AnsweredRequest>; done: Promise<void> };
  send(request: TestRequest): Promise<AnsweredRequest>;
  close(): Promise<void>;
}

/** What an actor starts with: its clock, its fixtures and mocks, and the APIs beside it (default: none but itself). */
export interface ActorOptions {
  clock: Clock;
  fixtures: Fixtures;
  mocks: Mocks;
  peers?: PeerLookup;
  /** The instance's ceilings on shared stores (`anvil start --max-kv-bytes`…), over the defaults. */
  quotas?: Partial<ApiQuotas>;
  /** The actor's data dir, kept when it closes (default: a temp dir of its own, removed). */
  dataDir?: string;
  /** The instance's data dir, whose embedded store holds the host and env's shared keys (default: the actor's own). */
  dataRoot?: string;
  /** Outgoing HTTP to the network under this egress policy (ANVIL_EGRESS_ALLOW) instead of `mocks.http`. */
  network?: { egressAllow: string | null };
  /** The instance's `--max-json-depth` (default: its default, 64). */
  maxJsonDepth?: number;
  /** The public host it serves (default: localhost): its keys' space in the shared stores. */
  host?: string;
  /** The shared stores in Redis (REDIS_URL, ANVIL_REDIS_PREFIX) instead of the embedded store of `dataRoot`. */
  redis?: { url: string; prefix: string };
}

export type Compiled = { ok: true; release: CompiledRelease } | { ok: false; errors: string[] };

export class ApiUnderTest {
  private readonly compiled = new Map<string, Promise<Compiled>>();

  constructor(readonly folder: string) {
    if (!prepared) {
      // The cells' V8 flags, set before the first isolate is made (isolated-vm's isolates take them).
      for (const flag of CELL_V8_FLAGS) v8.setFlagsFromString(flag);
      prepareParamChecks(builtinDirectives);
      prepared = true;
    }
  }

  /** The folder compiled for `env` as a deploy compiles it (once per env). */
  compile(env: string): Promise<Compiled> {
    let compiled = this.compiled.get(env);
    if (compiled === undefined) this.compiled.set(env, (compiled = compileFolder(this.folder, env)));
    return compiled;
  }

  /** A fresh actor, its fixtures applied. */
  async start(release: CompiledRelease, options: ActorOptions): Promise<CaseActor> {
    const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'anvil-test-case-')));
    const { clock } = options;
    const host = options.host ?? 'localhost';
    const withMaps: CompiledRelease = { ...release, host, maps: mergedMaps(release.maps, options.fixtures.maps) };
    const spec: ActorSpec = {
      id: `${host}/${release.env}/${release.key}@${release.release}`,
      key: release.key,
      host,
      env: release.env,
      release: release.release,
      releaseDir: this.folder,
      compiledFile: '',
      dataDir,
      localBaseUrl: TEST_BASE_URL,
      sandbox: { maxima: SANDBOX_MAXIMA },
      quotas: { ...DEFAULT_QUOTAS, ...options.quotas },
      stores: {
        dataRoot: options.dataRoot ?? dataDir,
        redisUrl: options.redis?.url ?? null,
        redisPrefix: options.redis?.prefix ?? 'anvil-test:',
        databaseUrl: null,
      },
      egressAllow: options.network?.egressAllow ?? null,
      maxJsonDepth: options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
    };
    const runtime = new TestRuntime(spec, withMaps, clock, options.mocks, options.network !== undefined);
    const close = async () => {
      try {
        await runtime.close();
      } finally {
        if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
      }
    };
    let sandbox: ReturnType<typeof createSandbox>;
    try {
      sandbox = createSandbox(withMaps, SANDBOX_MAXIMA, (event) =>
        runtime.lines.push({
          level: 'warn',
          msg: `custom directive over its ${event.kind} limit`,
          fields: { ...event },
        }),
      );
    } catch (error) {
      await close();
      throw error;
    }
    if (sandbox !== null) runtime.resource('sandbox', () => sandbox);
    const custom = sandbox?.directives() ?? new Map();
    const engine = new ApiEngine(
      withMaps,
      runtime,
      (name) => builtinDirectives.get(name) ?? custom.get(name),
      (event) => runtime.lines.push({ level: 'warn', msg: 'directive error', fields: { ...event } }),
    );
    const respond = (request: EngineRequest) => {
      const collector = answerCollector((path) => readFile(path));
      let sent = () => {};
      const sending = new Promise<void>((resolve) => (sent = resolve));
      // The engine may throw before its first await, or answer without one: either settles `done`.
      const done = new Promise<void>((resolve) =>
        resolve(
          engine.handle(request, (response) => {
            collector.send(response);
            sent();
          }),
        ),
      );
      const answer = Promise.race([sending, done]).then(async () => {
        const answered = await collector.answer();
        if (answered === null) throw new Error(`the engine sent no answer to ${request.verb} ${request.path}`);
        return answered;
      });
      return { answer, done };
    };
    const handle = async (request: EngineRequest): Promise<AnsweredRequest> => {
      const { answer, done } = respond(request);
      await done;
      return answer;
    };
    const peers = options.peers;
    runtime.peers = (key) => (key === release.key ? handle : (peers?.(key) ?? null));
    try {
      await applyFixtures(runtime, options.fixtures);
    } catch (error) {
      await close();
      throw error;
    }
    let requests = 0;
    return {
      runtime,
      handle,
      respond,
      send: (request) => handle(engineRequest(request, `test-${++requests}`, clock.now())),
      close,
    };
  }
}

async function compileFolder(folder: string, env: string): Promise<Compiled> {
  const loaded = await loadApiFolder(folder, env);
  if (!loaded.ok) return { ok: false, errors: loaded.errors.map(formatConfigError) };
  if (loaded.definition.database === 'postgres')
    return {
      ok: false,
      errors: [
        'api.yaml says "database: postgres": anvil test runs an API\'s database on SQLite only (test it on an instance with DATABASE_URL instead)',
      ],
    };
  const release: CompiledRelease = {
    format: 1,
    key: loaded.definition.key,
    host: 'localhost',
    env,
    release: 'test',
    createdAt: new Date().toISOString(),
    digest: 'test',
    definition: loaded.definition,
    maps: loaded.maps,
    customDirectives: loaded.customDirectives,
    directiveCode: loaded.directiveCode,
    directiveMaps: loaded.directiveMaps,
    localState: false,
  };
  return { ok: true, release };
}

/** The case's SQL after the migrations, then its key-value entries. */
async function applyFixtures(runtime: TestRuntime, fixtures: Fixtures): Promise<void> {
  const { sql, kv } = fixtures;
  if (sql.length > 0) {
    const db = apiDatabase(runtime);
    for (const text of sql) {
      for (const statement of checkSqlText(text, { allowMany: true })) {
        try {
          db.run(statement.text);
        } catch (error) {
          throw new Error(`fixtures.sql: ${(error as Error).message} (in: ${statement.text.trim().slice(0, 80)})`);
        }
      }
    }
  }
  for (const [name, value] of Object.entries(kv)) await runtime.kv.set(dataKey(name), JSON.stringify(value));
}

function engineRequest(request: TestRequest, id: string, now: number): EngineRequest {
  const rawHeaders = ['host', 'localhost', 'user-agent', 'anvil-test'];
  const named = new Set(Object.keys(request.headers).map((h) => h.toLowerCase()));
  let body: Buffer | null = null;
  if (typeof request.body === 'string') body = Buffer.from(request.body);
  else if (request.body !== undefined) {
    body = Buffer.from(JSON.stringify(request.body));
    if (!named.has('content-type')) rawHeaders.push('content-type', 'application/json');
  }
  if (body !== null && !named.has('content-length')) rawHeaders.push('content-length', String(body.length));
  for (const [name, value] of Object.entries(request.headers)) rawHeaders.push(name.toLowerCase(), value);
  return {
    id,
    verb: request.verb,
    path: request.path,
    rawQuery: request.query,
    rawHeaders,
    body,
    ip: request.ip,
    hop: 0,
    budget: DEFAULT_BUS_CALLS_PER_REQUEST,
    viaBus: false,
    receivedAt: now,
  };
}
