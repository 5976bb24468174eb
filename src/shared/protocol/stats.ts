/** What an actor thread reports about itself every few seconds (FrameType.Stats), thread → router. */
import { FrameType, jsonFrame } from './frames.js';

/** What an actor thread reports about itself (FrameType.Stats), for /anvil/metrics. */
export interface ThreadStats {
  /** Bytes used on the heaps of its isolates (custom directives), 0 when it has none. */
  isolateHeapBytes: number;
  isolates: number;
  /** CPU the thread used for its API over the last `windowMs`: its event loop and its isolates. */
  cpuMs: number;
  windowMs: number;
  /** Requests (and job runs) that arrived in the window. */
  requests: number;
  /** Requests its peers sent straight to it since the last report, for the router's metrics. */
  served?: ServedCount[];
  /** Calls it sent straight to peers since the last report (anvil_bus_calls_total). */
  peerCalls?: number;
  /** CPU its custom directive calls used since the last report, by directive. */
  sandboxCpu?: SandboxCpuCount[];
  /** [quota, refusals] its API met since the last report (anvil_quota_refusals_total). */
  quotaRefusals?: Array<[string, number]>;
  /** [reason (age, size), files] its log retention removed since the last report. */
  logFilesRemoved?: Array<[string, number]>;
  /** [kind (cpu, wall, memory, crash), calls] of custom directive calls that breached their sandbox since the last report. */
  sandboxBreaches?: Array<[string, number]>;
  /** Outgoing HTTP requests since the last report: [count, seconds summed, count per LATENCY_BUCKETS bucket (+Inf last)]. */
  outgoing?: [number, number, number[]];
}

/** [directive, calls, CPU seconds summed, calls per SANDBOX_CPU_BUCKETS bucket (+Inf last)] (shared/metrics/buckets.ts). */
export type SandboxCpuCount = [string, number, number, number[]];

/** [route, status, count, seconds summed, count per LATENCY_BUCKETS bucket (+Inf last)] (shared/metrics/buckets.ts). */
export type ServedCount = [string, number, number, number, number[]];

export function encodeStats(stats: ThreadStats): Buffer {
  return jsonFrame(FrameType.Stats, stats);
}

export function decodeStats(payload: Buffer): ThreadStats {
  return JSON.parse(payload.toString('utf8')) as ThreadStats;
}
