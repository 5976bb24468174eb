import type { AuditRetention } from '../audit/audit-store.js';
import type { CellAllocator } from '../../cell/process/cell-allocator.js';
import type { ConnectionLimits } from '../edge/connection-limits.js';
import type { FollowLimits } from '../../shared/logs/follow/follow-limits.js';
import type { ActorSpec } from '../../shared/protocol/cell-messages.js';
import type { ApiQuotas } from '../../shared/quotas/api-quotas.js';
import type { PublicHost } from '../../deploy/registry/registry.js';
import type { BootDeployReport } from '../../deploy/publish/boot-deploy.js';
import type { ActorLimits } from '../scheduling/actor-handle.js';
import type { HostFaultLimits } from '../scheduling/host-faults.js';

/**
 * Everything an instance is started with. The CLI builds it from its flags and from the
 * environment (read there, once); nothing below `startInstance` reads `process.env`.
 */
export interface InstanceOptions {
  dataDir: string;
  port: number;
  listen: string;
  env: string;
  /** True when --env was given: it then updates the default public host's env. */
  envExplicit: boolean;
  cells: number;
  /** Loaded threads each cell keeps for the next API that needs one. */
  spareThreads: number;
  /** Threads per cell that serve many quiet actors at once (0: none, every actor has its own). */
  sharedThreads: number;
  /** Every cell at most, the low-priority and quarantine cells included (at least cells + 2). */
  maxCells: number;
  apisDir: string | null;
  publish: boolean;
  /** Redeploy a sub-folder of `apisDir` when its files change. */
  watch: boolean;
  bodyLimit: number;
  /** How deep a JSON request body may nest (400 deeper). */
  maxJsonDepth: number;
  /** Bus calls one request from outside may cause in all, its whole tree of calls between APIs (508 beyond). */
  maxBusCalls: number;
  uploadLimit: number;
  /** Time a deploy may spend unpacking, validating and staging in the deploy worker (400 after). */
  deployTimeoutMs: number;
  /** Deploys of one public host under way at once (received, waiting for the deploy worker or in it); 429 above. */
  maxQueuedDeploys: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  drainTimeoutMs: number;
  /** On SIGTERM, how long /anvil/health answers 503 while requests are still served (for a balancer's health checks). */
  drainDelayMs: number;
  /** Each connection starts with a PROXY protocol v2 header (HAProxy `send-proxy-v2`) giving the client's address. */
  proxyProtocol: boolean;
  /** Client connections at most, in all and per client address (--max-connections, --max-connections-per-client). */
  connections: ConnectionLimits;
  /** Peers whose `x-forwarded-for` is believed (CIDRs, comma-separated); null: none. */
  trustedProxies: string | null;
  actors: ActorLimits;
  /** When a public host whose APIs abort cells is moved to its quarantine cell (--host-abort-limit, --host-abort-window). */
  hostFaults: HostFaultLimits;
  /** Maxima for custom directives (api.yaml `limits:` cannot go above) and isolates per thread. */
  sandbox: ActorSpec['sandbox'];
  /** Jobs running at once (one per API at most), and the backoff of the first retry. */
  jobs: { concurrency: number; backoffMs: number; leaseMs: number };
  /** Ceilings (and defaults) of every API's quotas on shared stores. */
  quotas: ApiQuotas;
  /** How long the audit log keeps entries (--audit-days, --audit-rows). */
  auditRetention: AuditRetention;
  /** Clients following an API's request log live, and the bytes each may have waiting (--log-followers, --log-follow-buffer). */
  logFollow: FollowLimits;
  /** Disk a public host's folder of the data directory may take, all its APIs together (--max-host-disk); 0: no total. */
  maxHostDiskBytes: number;
  /** Large response bodies the router may hold for clients, in all, before it cuts the slowest. */
  responseBufferBytes: number;
  /** The default public host's key (ANVIL_PUBLIC_HOST_KEY); null: the stored or a generated one. */
  publicHostKey: string | null;
  /** Shared stores and the job queue in this Redis (REDIS_URL); null: embedded (SQLite). */
  redisUrl: string | null;
  /** The cluster's PostgreSQL (DATABASE_URL): the control plane (hosts, APIs, releases) and the data of `database: postgres` APIs; null: the local registry only. */
  databaseUrl: string | null;
  /** Cluster mode: placement of the APIs that keep data on an instance's disk (src/front/placement). */
  placement: PlacementOptions;
  /** Keeps instances that share a Redis apart (ANVIL_REDIS_PREFIX, default `anvil:`). */
  redisPrefix: string;
  /** Exceptions to the egress policy (ANVIL_EGRESS_ALLOW: names, addresses, CIDRs, comma-separated). */
  egressAllow: string | null;
  /** Lets non-loopback clients read the metrics with a bearer token (ANVIL_METRICS_TOKEN). */
  metricsToken: string | null;
  /** More Node flags for the cell processes (ANVIL_CELL_NODE_FLAGS). */
  cellNodeFlags: readonly string[];
  /** The cells' memory allocator (ANVIL_CELL_MALLOC, resolved: cell/process/cell-allocator.ts). */
  cellAllocator: CellAllocator;
}

export interface PlacementOptions {
  /** How long an owner's lease lasts (--placement-lease): a dead owner's APIs move after it. */
  leaseMs: number;
  /** Where the internal listener binds (--internal-listen, default --listen) and its port (--internal-port, 0: any free one). */
  internalListen: string;
  internalPort: number;
  /** The address other instances dial (--internal-advertise, default --internal-listen). */
  internalAdvertise: string;
}

export interface StartedInstance {
  port: number;
  adminHost: string;
  publicHost: PublicHost;
  generatedKey: string | null;
  boot: BootDeployReport | null;
  stop(): Promise<void>;
}
