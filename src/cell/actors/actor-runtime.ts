import { join } from 'node:path';
import type { CompatMode, CompiledRelease } from '../../shared/api-model/types.js';
import type { ApiRuntime } from '../../engine/context.js';
import { deepFreeze } from '../../engine/resolve.js';
import { formatApiId, formatEnvId } from '../../shared/protocol/api-id.js';
import type { ActorSpec } from '../../shared/protocol/cell-messages.js';
import type { BusCall, BusResponse } from '../../shared/protocol/bus-calls.js';
import { DEFAULT_QUOTAS, effectiveQuotas, type ApiQuotas } from '../../shared/quotas/api-quotas.js';
import { kvCountingRefusals } from '../../directives/stores/kv-refusals.js';
import { Tally } from '../../shared/quotas/tally.js';
import { JsonLinesLog } from '../../shared/logs/json-lines-log.js';
import type { KvStore } from '../../engine/kv-store.js';
import type { Tracer } from '../../shared/tracing/trace-span.js';
import { openKvBackend } from '../../directives/stores/open-kv.js';
import type { BusClient } from './bus-client.js';
import { LatencyMeter } from './latency-meter.js';
import { effectiveLimits } from './sandbox-setup.js';

/** ApiRuntime of one actor thread: the release's facts, its per-thread resources and pending work. */
export class ActorRuntime implements ApiRuntime {
  readonly key: string;
  readonly host: string;
  readonly env: string;
  readonly release: string;
  readonly debug: boolean;
  readonly compat: CompatMode | null;
  readonly dataDir: string;
  readonly database: ApiRuntime['database'];
  readonly releaseDir: string;
  readonly localBaseUrl: string;
  readonly egressAllow: string | null;
  readonly maps: Readonly<Record<string, unknown>>;
  readonly maxJsonDepth: number;
  readonly hostMemoryBytes: number;
  readonly quotas: ApiQuotas;
  /** Quota refusals by quota, and log files removed by reason, since the thread's last stats report. */
  readonly refusals = new Tally();
  readonly logFilesRemoved = new Tally();
  /** Sandbox breaches by kind, and outgoing HTTP latency, since the thread's last stats report. */
  readonly sandboxBreaches = new Tally();
  readonly outgoing = new LatencyMeter();
  private readonly resources = new Map<string, unknown>();
  private readonly pending = new Set<Promise<unknown>>();
  /** Set once the thread's socket exists. */
  bus: BusClient | null = null;
  readonly upstreams: ApiRuntime['upstreams'] = null;
  /** Set before the engine is made, when tracing is on. */
  tracer: Tracer | null = null;
  private kvStore: KvStore | null = null;
  private envKvStore: KvStore | null = null;
  private readonly stores: ActorSpec['stores'];
  private readonly namespace: string;

  constructor(
    spec: ActorSpec,
    release: CompiledRelease,
    readonly log: ApiRuntime['log'],
  ) {
    this.key = spec.key;
    this.host = spec.host;
    this.env = spec.env;
    this.release = spec.release;
    this.debug = release.definition.debug;
    this.compat = release.definition.compat ?? null;
    this.dataDir = spec.dataDir;
    this.database = { mode: release.definition.database ?? 'sqlite', url: spec.stores.databaseUrl };
    this.releaseDir = spec.releaseDir;
    this.localBaseUrl = spec.localBaseUrl;
    this.egressAllow = spec.egressAllow;
    this.maxJsonDepth = spec.maxJsonDepth;
    this.hostMemoryBytes = effectiveLimits(release.definition.limits ?? {}, spec.sandbox.maxima).memoryMb * 2 ** 20;
    this.stores = spec.stores;
    this.namespace = formatApiId(spec);
    this.maps = deepFreeze(release.maps);
    this.quotas = effectiveQuotas(release.definition.limits ?? {}, spec.quotas ?? DEFAULT_QUOTAS);
  }

  now(): number {
    return Date.now();
  }

  resource<T>(name: string, create: () => T): T {
    if (!this.resources.has(name)) this.resources.set(name, create());
    return this.resources.get(name) as T;
  }

  /** Opened on first use: an API that never counts or caches holds no store connection. */
  get kv(): KvStore {
    this.kvStore ??= this.kvView(this.namespace);
    return this.kvStore;
  }

  get envKv(): KvStore {
    this.envKvStore ??= this.kvView(formatEnvId(this));
    return this.envKvStore;
  }

  /** A namespace of the instance's store, on the thread's one connection, under the API's kv quota. */
  private kvView(namespace: string): KvStore {
    const backend = this.resource('kv', () =>
      openKvBackend({
        dataDir: this.stores.dataRoot,
        now: () => this.now(),
        redisUrl: this.stores.redisUrl ?? undefined,
        redisPrefix: this.stores.redisPrefix,
      }),
    );
    return kvCountingRefusals(backend.namespace(namespace, { maxBytes: this.quotas.kvBytes }), this.refusals);
  }

  /** The API's request log (logs/ in its data dir), opened on first use, under the API's log quotas. */
  get requestLog(): JsonLinesLog {
    return this.resource('requestLog', () => {
      const { logFileBytes, logBytes, logDays } = this.quotas;
      return new JsonLinesLog(
        join(this.dataDir, 'logs'),
        { fileBytes: logFileBytes, totalBytes: logBytes, days: logDays },
        {
          removed: (reason, files) => this.logFilesRemoved.add(reason, files),
        },
      );
    });
  }

  enqueue(payload: string, delayMs: number): Promise<string> {
    if (this.bus === null) return Promise.reject(new Error('the in-process bus is not connected'));
    return this.bus.enqueue(payload, delayMs, {
      maxPayloadBytes: this.quotas.jobPayloadBytes,
      maxQueued: this.quotas.queuedJobs,
      maxQueuedBytes: this.quotas.queuedJobBytes,
    });
  }

  callLocal(call: BusCall, timeoutMs: number): Promise<BusResponse> {
    if (this.bus === null) return Promise.reject(new Error('the in-process bus is not connected'));
    return this.bus.call(call, timeoutMs);
  }

  track(work: Promise<unknown>): void {
    const settled: Promise<unknown> = work.then(
      () => this.pending.delete(settled),
      () => this.pending.delete(settled),
    );
    this.pending.add(settled);
  }

  /** Waits for tracked work, then closes every resource that has a close(). */
  async close(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    for (const resource of this.resources.values()) {
      const close = (resource as { close?: () => unknown } | null)?.close;
      if (typeof close === 'function') await close.call(resource);
    }
    this.resources.clear();
  }
}
