/**
 * The ApiRuntime of one test case: an actor's runtime (its own data dir, database and key space)
 * whose clock is the case's, whose outgoing HTTP goes to the case's mocks (undici's MockAgent: an
 * upstream no mock names is refused, never reached), and whose bus calls go to the API itself (or
 * another API run in the same process) or to the case's mocks of other APIs. Jobs it queues are
 * kept, not run.
 */
import { MockAgent } from 'undici';
import { ActorRuntime } from '../cell/actors/actor-runtime.js';
import type { CompiledRelease } from '../shared/api-model/types.js';
import type { SendResponse } from '../engine/api-engine.js';
import type { BusCall, BusResponse } from '../shared/protocol/bus-calls.js';
import type { ActorSpec } from '../shared/protocol/cell-messages.js';
import type { EngineRequest } from '../shared/protocol/requests.js';
import type { ApiMock, HttpMock } from './test-file.js';

export interface LoggedLine {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

export interface AnsweredRequest {
  status: number;
  headers: string[];
  body: Buffer;
  budgetLeft?: number;
}

/** Runs a request on an API's engine. */
export type OwnHandler = (request: EngineRequest) => Promise<AnsweredRequest>;

/** The engine of the API a bus call names by its key, when it runs in this process (null: mocks.apis answer). */
export type PeerLookup = (key: string) => OwnHandler | null;

/** What the case's clock gives: epoch ms. */
export interface Clock {
  now(): number;
}

export class TestRuntime extends ActorRuntime {
  /** null: the network, under the egress policy (the project's own in-process tests). */
  override readonly upstreams: MockAgent | null;
  readonly lines: LoggedLine[] = [];
  readonly jobs: Array<{ payload: string; delayMs: number }> = [];
  /** Set once the engines exist: the API itself, and any other API run alongside it. */
  peers: PeerLookup = () => null;
  private calls = 0;

  constructor(
    spec: ActorSpec,
    release: CompiledRelease,
    private readonly clock: Clock,
    private readonly mocks: { http: readonly HttpMock[]; apis: readonly ApiMock[] },
    network = false,
  ) {
    super(spec, release, (level, msg, fields) => this.lines.push({ level, msg, fields: fields ?? {} }));
    this.upstreams = network ? null : mockUpstreams(mocks.http);
  }

  /** The calls it sent straight to the APIs run beside it (itself included) so far, as `anvil_bus_calls_total` counts them. */
  get busCalls(): number {
    return this.calls;
  }

  override now(): number {
    return this.clock.now();
  }

  override enqueue(payload: string, delayMs: number): Promise<string> {
    this.jobs.push({ payload, delayMs });
    return Promise.resolve(`test-job-${this.jobs.length}`);
  }

  override async callLocal(call: BusCall): Promise<BusResponse> {
    const [, key = '', ...rest] = call.path.split('/');
    const path = `/${rest.join('/')}`;
    const peer = this.peers(key);
    if (peer !== null) {
      const answer = await peer({
        ...call,
        path,
        id: `test-bus-${++this.calls}`,
        ip: '127.0.0.1',
        hop: call.hop + 1,
        viaBus: true,
        receivedAt: this.now(),
      });
      return { ...answer, budgetLeft: answer.budgetLeft ?? 0 };
    }
    // A mock's path is the endpoint's (`/1`) or, as the caller writes it, with the key first (`/users/1`).
    const asked = (mock: ApiMock) => (mock.path.includes('?') ? `${path}?${call.rawQuery}` : path);
    const mock = this.mocks.apis.find(
      (m) => m.api === key && m.verb === call.verb && (m.path === asked(m) || m.path === `/${key}${asked(m)}`),
    );
    if (mock === undefined) {
      const message = `anvil test: no mock of API "${key}" answers ${call.verb} ${path} (add one under mocks.apis)`;
      this.lines.push({ level: 'warn', msg: message, fields: {} });
      return {
        status: 404,
        headers: ['content-type', 'application/json'],
        body: Buffer.from(JSON.stringify({ error: message })),
        budgetLeft: call.budget,
      };
    }
    const { body, headers } = mockAnswer(mock);
    return {
      status: mock.status,
      headers: Object.entries(headers).flat(),
      body: Buffer.from(body),
      budgetLeft: call.budget,
    };
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      await this.upstreams?.close();
    }
  }
}

/** A MockAgent that answers the mocks, each as often as asked, and refuses every other request. */
function mockUpstreams(mocks: readonly HttpMock[]): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  for (const mock of mocks) {
    const url = new URL(mock.url);
    const withQuery = url.search !== '';
    // undici hands the path function the request's query sorted and re-encoded: the mock's likewise.
    const query = new URLSearchParams(url.search);
    query.sort();
    const wanted = withQuery ? `${url.pathname}?${query.toString()}` : url.pathname;
    const { body, headers } = mockAnswer(mock);
    agent
      .get(url.origin)
      .intercept({ method: mock.verb, path: (path: string) => (withQuery ? path : path.split('?')[0]) === wanted })
      .reply(mock.status, body, { headers })
      .persist();
  }
  return agent;
}

/** A mock's body as text (JSON unless it is a string), with a content type when it names none. */
function mockAnswer(mock: { body?: unknown; headers: Record<string, string> }): {
  body: string;
  headers: Record<string, string>;
} {
  const headers = Object.fromEntries(Object.entries(mock.headers).map(([k, v]) => [k.toLowerCase(), v]));
  if (mock.body === undefined) return { body: '', headers };
  if (typeof mock.body === 'string')
    return { body: mock.body, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } };
  return { body: JSON.stringify(mock.body), headers: { 'content-type': 'application/json', ...headers } };
}

/** What a SendResponse receives, as bytes (a file the engine would have the router stream, read). */
export function answerCollector(read: (path: string) => Promise<Buffer>): {
  send: SendResponse;
  answer: () => Promise<AnsweredRequest | null>;
} {
  let sent: Parameters<SendResponse>[0] | null = null;
  return {
    send: (response) => {
      sent = response;
    },
    answer: async () => {
      if (sent === null) return null;
      const response: Parameters<SendResponse>[0] = sent;
      const body =
        response.file !== undefined
          ? await read(response.file.path)
          : Buffer.isBuffer(response.body)
            ? response.body
            : Buffer.from(response.body ?? '');
      return { status: response.status, headers: response.headers, body, budgetLeft: response.budgetLeft };
    },
  };
}
