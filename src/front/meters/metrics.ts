import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { CellProcessMeters } from './cell-process-meters.js';
import { LiveFigures } from './live-figures.js';
import { OperationMeters, type JobOutcome } from './operation-meters.js';
import { RequestMeters } from './request-meters.js';
import { SandboxCpuMeters } from './sandbox-cpu-meters.js';
import type { ThreadStats } from '../../shared/protocol/stats.js';
import { safeEqual } from '../../shared/security/safe-equal.js';
import { Errors } from '../../shared/errors.js';

/** Where an API's gauges come from at scrape time (the actor table). */
export interface ActorGauges {
  host: string;
  api: string;
  threads: number;
  /** Of its threads, places on a shared thread (the others are its own). */
  sharedThreads: number;
  mailbox: number;
  isolates: number;
  isolateHeapBytes: number;
}

/** A request's end, as the dispatcher sees it. */
export interface RequestObservation {
  host: string;
  api: string;
  /** The endpoint that answered (`get /users/{id}`), or '' when none did (404, or the router answered). */
  route: string;
  status: number;
  /** Set when the router answered instead of the API: `timeout`, `mailbox_full`, `cell_died`, … */
  failure: string | null;
  seconds: number;
}

const NO_ROUTE = '(none)';

/**
 * The instance's Prometheus metrics (SPEC §6 `GET /anvil/metrics`), answered only to loopback
 * clients or to `authorization: Bearer <ANVIL_METRICS_TOKEN>`: tenants must not read each other's
 * figures. Labels are host, API key and route template, never a raw path.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly connections = new Counter({
    name: 'anvil_http_connections_total',
    help: 'TCP connections accepted by the router',
    registers: [this.registry],
  });
  readonly connectionsRefused = new Counter({
    name: 'anvil_http_connections_refused_total',
    help: 'Connections refused and closed at once (answered 429 or 503, up to 100 a second): their client address held --max-connections-per-client (reason per_client), or the router held --max-connections, every one busy (reason total)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly connectionsEvicted = new Counter({
    name: 'anvil_http_connections_evicted_total',
    help: 'Connections closed to make room under --max-connections: half_open (no complete request head yet), idle (between requests), receiving (its request body still arriving) or busy (a request in flight, of the client holding the most)',
    labelNames: ['state'],
    registers: [this.registry],
  });
  readonly busCalls = new Counter({
    name: 'anvil_bus_calls_total',
    help: 'Calls made by an API to another over the in-process bus',
    labelNames: ['host', 'api'],
    registers: [this.registry],
  });
  readonly cellRestarts = new Counter({
    name: 'anvil_cell_restarts_total',
    help: 'Cell processes that died and were restarted',
    labelNames: ['cell'],
    registers: [this.registry],
  });
  readonly cellAborts = new Counter({
    name: 'anvil_cell_aborts_total',
    help: "Cell processes the API's code aborted (its directive was running, or the router killed the cell for it)",
    labelNames: ['host', 'api'],
    registers: [this.registry],
  });
  private readonly requests = new RequestMeters(this.registry);
  private readonly sandboxCpu = new SandboxCpuMeters(this.registry);
  private readonly errors = new Counter({
    name: 'anvil_request_errors_total',
    help: 'Requests that ended in an error: the API answered 5xx (reason "api"), or the router answered for it (timeout, mailbox_full, cell_died, …)',
    labelNames: ['host', 'api', 'route', 'reason'],
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: 'anvil_rate_limited_total',
    help: 'Requests refused with 429 Too Many Requests',
    labelNames: ['host', 'api', 'route'],
    registers: [this.registry],
  });

  readonly quotaRefusals = new Counter({
    name: 'anvil_quota_refusals_total',
    help: 'Writes refused, or responses cut or refused, because an API reached one of its quotas on shared things (job_payload, queued_jobs, kv_bytes, files_bytes, database_bytes, response_buffer, response_headers, response_header_bytes, bus_calls)',
    labelNames: ['host', 'api', 'quota'],
    registers: [this.registry],
  });

  private readonly logFilesRemoved = new Counter({
    name: 'anvil_log_files_removed_total',
    help: "Files of an API's request log removed by retention: older than its days (reason age) or over its total size (reason size)",
    labelNames: ['host', 'api', 'reason'],
    registers: [this.registry],
  });

  /** Deploys, rollbacks, job outcomes, sandbox breaches, outgoing calls. */
  readonly operations = new OperationMeters(this.registry);
  /** What each cell process reports of itself (CPU, memory, event-loop lag). */
  readonly cells = new CellProcessMeters(this.registry);
  /** The rolling windows of the operator endpoints (GET /anvil/overview, /anvil/api/<key>/stats). */
  readonly live = new LiveFigures();

  constructor(private readonly token: string | null) {
    // The router's own process: CPU, memory, GC, handles, event-loop lag (nodejs_eventloop_lag_*).
    collectDefaultMetrics({ register: this.registry });
  }

  /** Counts one request; cheap on the hot path (plain numbers until a scrape). */
  observe(o: RequestObservation): void {
    const route = o.route === '' ? NO_ROUTE : o.route;
    this.requests.observe(o.host, o.api, route, o.status, o.seconds);
    this.live.request(o.host, o.api, route, o.status, o.seconds);
    this.countOutcome(o.host, o.api, route, o.status, o.failure, 1);
  }

  /** Errors by reason and 429s, for `count` requests that ended alike. */
  private countOutcome(
    host: string,
    api: string,
    route: string,
    status: number,
    failure: string | null,
    count: number,
  ): void {
    if (failure !== null) this.errors.inc({ host, api, route, reason: failure }, count);
    else if (status >= 500) this.errors.inc({ host, api, route, reason: 'api' }, count);
    if (status === 429) this.rateLimited.inc({ host, api, route }, count);
  }

  /**
   * What a thread of `api` counted itself and reported: requests it took straight from its peers
   * (bus calls that skipped the router), the calls it made that way, and its custom directives' CPU.
   */
  observeThread(host: string, api: string, stats: ThreadStats): void {
    for (const [route, status, count, sum, buckets] of stats.served ?? []) {
      const label = route === '' ? NO_ROUTE : route;
      this.requests.add(host, api, label, status, count, sum, buckets);
      this.live.requests(host, api, label, status, count, buckets);
      this.countOutcome(host, api, label, status, null, count);
    }
    if (stats.peerCalls !== undefined && stats.peerCalls > 0) this.busCalls.inc({ host, api }, stats.peerCalls);
    if (stats.sandboxCpu !== undefined) this.sandboxCpu.add(host, api, stats.sandboxCpu);
    for (const [quota, count] of stats.quotaRefusals ?? []) this.quotaRefusals.inc({ host, api, quota }, count);
    for (const [reason, count] of stats.logFilesRemoved ?? []) this.logFilesRemoved.inc({ host, api, reason }, count);
    for (const [kind, count] of stats.sandboxBreaches ?? []) {
      this.operations.sandboxBreaches.inc({ host, api, kind }, count);
      this.live.sandboxBreaches(host, api, count);
    }
    if (stats.outgoing !== undefined) this.operations.outgoing(host, api, stats.outgoing);
  }

  /** How a job run ended. */
  jobOutcome(host: string, api: string, outcome: JobOutcome): void {
    this.operations.jobRuns.inc({ host, api, outcome });
    if (outcome === 'failed') this.live.jobFailed(host, api);
  }

  /** Mailbox depth, threads and isolate heap per API, read when metrics are scraped. */
  watchActors(read: () => ActorGauges[]): void {
    const gauge = (name: string, help: string, pick: (g: ActorGauges) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['host', 'api'],
        registers: [this.registry],
        collect() {
          this.reset();
          for (const g of read()) this.set({ host: g.host, api: g.api }, pick(g));
        },
      });
    gauge('anvil_actor_mailbox_depth', "Requests waiting in the API's mailbox", (g) => g.mailbox);
    gauge('anvil_actor_threads', 'Worker threads the API has now', (g) => g.threads);
    gauge(
      'anvil_actor_shared_threads',
      'Of those, places on a shared thread that serves many quiet APIs (the others are its own)',
      (g) => g.sharedThreads,
    );
    gauge('anvil_isolates', "V8 isolates the API's custom directives hold", (g) => g.isolates);
    gauge(
      'anvil_isolate_heap_bytes',
      "Heap used by the API's isolates (reported by its threads every 2 s)",
      (g) => g.isolateHeapBytes,
    );
  }

  /**
   * Public hosts whose APIs aborted cells (front/scheduling/host-faults.ts), read when metrics are scraped:
   * 1 for the host's stage, `new-apis` (suspect), `all-apis` (moved) or `paused`.
   */
  watchHostFaults(read: () => Array<{ host: string; stage: string | null; pausedUntil: number }>): void {
    new Gauge({
      name: 'anvil_host_quarantine',
      help: 'Public hosts whose APIs aborted cells: stage new-apis (its APIs that start now start in its quarantine cell), all-apis (all run there), paused (all answer 503)',
      labelNames: ['host', 'stage'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { host, stage, pausedUntil } of read()) {
          if (stage !== null) this.set({ host, stage }, 1);
          if (pausedUntil > 0) this.set({ host, stage: 'paused' }, 1);
        }
      },
    });
  }

  /** Cell processes running or starting, read when metrics are scraped. */
  watchCells(read: () => number): void {
    this.watchNumber('anvil_cells', 'Cell processes: the base cells, the low-priority cell and quarantine cells', read);
  }

  /** Bytes of large response bodies the router holds for clients, read when metrics are scraped. */
  watchResponseBuffer(read: () => number): void {
    this.watchNumber(
      'anvil_response_buffer_bytes',
      'Bytes of large response bodies the router holds for clients that have not taken them yet (capped by --response-buffer)',
      read,
    );
  }

  /** Client connections open now, read when metrics are scraped. */
  watchConnections(read: () => number): void {
    this.watchNumber(
      'anvil_http_connections_open',
      'Client connections the router holds open (capped by --max-connections)',
      read,
    );
  }

  private watchNumber(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** Job queue depth per API and state, read when metrics are scraped. */
  watchQueue(read: () => Promise<Array<{ host: string; api: string; counts: Record<string, number> }>>): void {
    new Gauge({
      name: 'anvil_job_queue_depth',
      help: 'Jobs per API and state',
      labelNames: ['host', 'api', 'state'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { host, api, counts } of await read())
          for (const [state, n] of Object.entries(counts)) this.set({ host, api, state }, n);
      },
    });
  }

  /** `clientAddress`: the client as the front door resolved it (behind a balancer, not the balancer); a client not allowed is refused (401). */
  async handle(req: IncomingMessage, res: ServerResponse, clientAddress: string): Promise<void> {
    if (!this.allowed(req, clientAddress)) throw Errors.unauthorized();
    const body = await this.registry.metrics();
    res.writeHead(200, { 'content-type': this.registry.contentType }).end(body);
  }

  private allowed(req: IncomingMessage, address: string): boolean {
    const auth = req.headers.authorization;
    if (this.token && typeof auth === 'string' && auth.startsWith('Bearer '))
      return safeEqual(this.token, auth.slice(7).trim());
    return address === '127.0.0.1' || address === '::1';
  }
}
