import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApiFolder } from '../../src/deploy/api-yaml/load-api.js';
import { formatConfigError } from '../../src/shared/api-model/types.js';
import { newReleaseId } from '../../src/deploy/registry/release-id.js';
import { ApiUnderTest, TEST_BASE_URL, type CaseActor } from '../../src/testing/api-under-test.js';
import type { ApiQuotas } from '../../src/shared/quotas/api-quotas.js';
import type { EngineRequest } from '../../src/shared/protocol/requests.js';
import type { AnsweredRequest } from '../../src/testing/test-runtime.js';
import { writeApi, type ApiFiles, type Reply, type RequestOptions } from './instance.js';

interface StartOptions {
  env?: string;
  egressAllow?: string;
  quotas?: Partial<ApiQuotas>;
  maxJsonDepth?: number;
  /** The public host the APIs serve (default: localhost). */
  host?: string;
  /** An instance's data dir to share (another public host of the same instance: `dataDir` of its harness); default: one of its own, removed by dispose(). */
  dataDir?: string;
  /** The shared stores in Redis, as an instance's REDIS_URL and ANVIL_REDIS_PREFIX set them (default: the embedded store in dataDir). */
  redis?: { url: string; prefix: string };
}

/**
 * API folders run in the test's own process (src/testing: the engine, built-ins and sandbox an
 * actor thread runs, without router, cells or sockets), for tests of what the engine and the
 * directives do. One actor per API for the whole file, on the real clock; bus calls between these
 * APIs go from one engine to the other. A request (or bus call) is answered when the engine sends
 * its response, before the AFTER_FLOW pass, as a thread answers. Isolation, faults, the HTTP edge and clusters stay with
 * spawned instances (helpers/instance.ts).
 */
export class InProcessApis {
  /** Laid out as an instance's: each API's data in `<dataDir>/<host>/<env>/<key>/` (its logs/, db.sqlite…). */
  readonly dataDir: string;
  /** What `$.memory.anvil-localhost` is here (an instance's own address): Pull, Push and Http to it go to these APIs. */
  readonly localBaseUrl = TEST_BASE_URL;
  private readonly refusals = new Map<string, Map<string, number>>();

  private constructor(
    private readonly dir: string,
    private readonly actors: Map<string, CaseActor>,
    private readonly flows: Flows,
    dataDir: string,
    private readonly host: string,
  ) {
    this.dataDir = dataDir;
  }

  /** `apis`: name → files, or a folder to copy; outgoing HTTP goes to the network under `egressAllow`, as an instance's; `quotas` and `maxJsonDepth` are its `--max-*`; `redis` its REDIS_URL. */
  static async start(apis: Record<string, ApiFiles | string>, options: StartOptions = {}): Promise<InProcessApis> {
    const env = options.env ?? 'dev';
    const dir = mkdtempSync(join(tmpdir(), 'anvil-in-process-'));
    const actors = new Map<string, CaseActor>();
    const flows = new Flows();
    const peers = (key: string) => {
      const actor = actors.get(key);
      return actor === undefined ? null : (request: EngineRequest) => flows.answer(actor, request);
    };
    try {
      await startEach(apis, dir, env, options, actors, peers);
    } catch (error) {
      for (const actor of actors.values()) await actor.close();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return new InProcessApis(dir, actors, flows, options.dataDir ?? join(dir, 'data'), options.host ?? 'localhost');
  }

  /** `path` is `/<key>/<endpoint path>`, as a client of an instance writes it; `ip` the client's address (default 127.0.0.1). */
  async request(path: string, options: RequestOptions & { ip?: string } = {}): Promise<Reply> {
    const url = new URL(path, 'http://localhost');
    const [, key = '', ...rest] = url.pathname.split('/');
    const actor = this.actors.get(key);
    if (actor === undefined) throw new Error(`no API "${key}" runs here (${[...this.actors.keys()].join(', ')})`);
    const rawHeaders = ['host', options.host ?? this.host];
    for (const [name, value] of Object.entries(options.headers ?? {})) rawHeaders.push(name.toLowerCase(), value);
    const body = options.body === undefined ? null : Buffer.from(options.body);
    if (body !== null && options.headers?.['content-length'] === undefined)
      rawHeaders.push('content-length', String(body.length));
    const answer = await this.flows.answer(actor, {
      id: `in-process-${++requests}`,
      verb: (options.method ?? 'GET').toUpperCase(),
      path: `/${rest.join('/')}`,
      rawQuery: url.search.slice(1),
      rawHeaders,
      body,
      ip: options.ip ?? '127.0.0.1',
      hop: 0,
      budget: 1_000,
      viaBus: false,
      receivedAt: Date.now(),
    });
    // As an HTTP client sees it: an answer to HEAD has no body (the router sends none).
    return reply(options.method?.toUpperCase() === 'HEAD' ? { ...answer, body: Buffer.alloc(0) } : answer);
  }

  /** The folder the API `name` (of `start`'s apis) runs from: its release's files, as a deploy keeps them (Assets/…). */
  releaseDir(name: string): string {
    return join(this.dir, 'apis', name);
  }

  /** The lines the APIs' actors wrote to the instance log, each with its `api`. */
  logLines(): Array<Record<string, any>> {
    return [...this.actors].flatMap(([api, actor]) =>
      actor.runtime.lines.map((l) => ({ api, level: l.level, msg: l.msg, ...l.fields })),
    );
  }

  /** The API's refusals by `quota` so far, as `anvil_quota_refusals_total` would count them (the threads' tallies, added up). */
  quotaRefusals(key: string, quota: string): number {
    const runtime = this.runtime(key);
    const counted = this.refusals.get(key) ?? new Map<string, number>();
    for (const [name, count] of runtime.refusals.take() ?? []) counted.set(name, (counted.get(name) ?? 0) + count);
    this.refusals.set(key, counted);
    return counted.get(quota) ?? 0;
  }

  /** The calls the API `key` made over the bus to these APIs (itself included) so far, as `anvil_bus_calls_total` counts them. */
  busCalls(key: string): number {
    return this.runtime(key).busCalls;
  }

  private runtime(key: string): CaseActor['runtime'] {
    const runtime = this.actors.get(key)?.runtime;
    if (runtime === undefined) throw new Error(`no API "${key}" runs here`);
    return runtime;
  }

  /** The log lines as one text, as an instance's output reads (one JSON line each). */
  output(): string {
    return this.logLines()
      .map((l) => JSON.stringify(l))
      .join('\n');
  }

  /** What a deploy of `files` would answer: 201, or 400 with the deploy's errors (the same loader). */
  async deploy(files: ApiFiles, env = 'dev'): Promise<Reply> {
    const folder = mkdtempSync(join(this.dir, 'deploy-'));
    writeApi(folder, files);
    const loaded = await loadApiFolder(folder, env);
    const [status, body] = loaded.ok
      ? [201, { key: loaded.definition.key }]
      : [400, { errors: loaded.errors.map(formatConfigError) }];
    const text = JSON.stringify(body);
    return { status, headers: { 'content-type': 'application/json' }, text, json: () => JSON.parse(text) };
  }

  async dispose(): Promise<void> {
    const defects = await this.flows.settled();
    for (const actor of this.actors.values()) await actor.close();
    rmSync(this.dir, { recursive: true, force: true });
    if (defects.length > 0) throw new AggregateError(defects, 'the engine failed running a request');
  }
}

/** Each API compiled and its actor started, into `actors` (so that a failure can close those already started). */
async function startEach(
  apis: Record<string, ApiFiles | string>,
  dir: string,
  env: string,
  options: StartOptions,
  actors: Map<string, CaseActor>,
  peers: (key: string) => CaseActor['handle'] | null,
): Promise<void> {
  for (const [name, files] of Object.entries(apis)) {
    const folder = join(dir, 'apis', name);
    if (typeof files === 'string') cpSync(files, folder, { recursive: true });
    else writeApi(folder, files);
    const compiled = await new ApiUnderTest(folder).compile(env);
    if (!compiled.ok) throw new Error(`${name} is not valid:\n${compiled.errors.join('\n')}`);
    // A release id as a deploy makes one ($.memory.anvil-release).
    const release = { ...compiled.release, release: newReleaseId() };
    const host = options.host ?? 'localhost';
    const dataRoot = options.dataDir ?? join(dir, 'data');
    const dataDir = join(dataRoot, host, env, release.key);
    mkdirSync(dataDir, { recursive: true });
    const actor = await new ApiUnderTest(folder).start(release, {
      host,
      dataDir,
      dataRoot,
      quotas: options.quotas,
      clock: Date,
      fixtures: { sql: [], kv: {}, maps: {} },
      mocks: { http: [], apis: [] },
      peers,
      network: { egressAllow: options.egressAllow ?? null },
      maxJsonDepth: options.maxJsonDepth,
      redis: options.redis,
    });
    actors.set(release.key, actor);
  }
}

/** The flows still running (AFTER_FLOW passes after their answers), waited for before the actors close; a defect of the engine in one fails dispose(). */
class Flows {
  private readonly running = new Set<Promise<void>>();
  private readonly defects: unknown[] = [];

  answer(actor: CaseActor, request: EngineRequest): Promise<AnsweredRequest> {
    const { answer, done } = actor.respond(request);
    const settled = done
      .catch((error: unknown) => void this.defects.push(error))
      .finally(() => this.running.delete(settled));
    this.running.add(settled);
    return answer;
  }

  async settled(): Promise<unknown[]> {
    while (this.running.size > 0) await Promise.all(this.running);
    return this.defects;
  }
}

let requests = 0;

/** Headers as the spawned helper's HTTP client (undici) gives them: lower-case names, a repeated one as the list of its values. */
function reply(answer: AnsweredRequest): Reply {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < answer.headers.length; i += 2) {
    const name = answer.headers[i]!.toLowerCase();
    const value = answer.headers[i + 1]!;
    const known = headers[name];
    headers[name] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value];
  }
  const text = answer.body.toString('utf8');
  return { status: answer.status, headers, text, json: () => JSON.parse(text) };
}

/** startInstance's options, for a test moved from a spawned instance: its `apis`, `ANVIL_EGRESS_ALLOW`, `REDIS_URL` and `ANVIL_REDIS_PREFIX` of its `env`, and the ceilings its `--max-*` flags set, as `quotas`; `host` and `dataDir` for another public host of the same instance. */
export function startInProcess(
  options: {
    apis: Record<string, ApiFiles | string>;
    env?: Record<string, string>;
    quotas?: Partial<ApiQuotas>;
  } & Pick<StartOptions, 'host' | 'dataDir'>,
): Promise<InProcessApis> {
  const {
    ANVIL_EGRESS_ALLOW: egressAllow,
    REDIS_URL: redisUrl,
    ANVIL_REDIS_PREFIX: prefix = 'anvil:',
  } = options.env ?? {};
  return InProcessApis.start(options.apis, {
    egressAllow,
    quotas: options.quotas,
    redis: redisUrl ? { url: redisUrl, prefix } : undefined,
    host: options.host,
    dataDir: options.dataDir,
  });
}
