/**
 * Every option of `anvil start`, each once: its flag and environment variable, how its text is
 * read and checked, its default, its group and what it does. `anvil start`'s commander options
 * (start-command.ts), the instance's options (start-options.ts) and the table of docs/operate.md
 * (start-doc.ts, `npm run docs`) are made from it. Doc text is markdown-light: `code` only.
 */
import { availableParallelism } from 'node:os';
import { DEFAULT_AUDIT_RETENTION } from '../front/audit/audit-store.js';
import { DEFAULT_BUS_CALLS_PER_REQUEST } from '../engine/call-budget.js';
import { MAX_DEFAULT_CONNECTIONS, MAX_DEFAULT_CONNECTIONS_PER_CLIENT } from '../front/edge/connection-limits.js';
import { DEFAULT_MAX_JSON_DEPTH } from '../shared/http/json-depth.js';
import { DEFAULT_FOLLOW_LIMITS } from '../shared/logs/follow/follow-limits.js';
import { DEFAULT_QUOTAS } from '../shared/quotas/api-quotas.js';
import { DEFAULT_HOST_DISK_BYTES } from '../front/scheduling/host-disk-watch.js';
import { DEFAULT_HOST_FAULT_LIMITS } from '../front/scheduling/host-faults.js';
import { DEFAULT_MAX_QUEUED_DEPLOYS } from '../deploy/releases/deploy-admission.js';
import {
  byteSize,
  byteSizeOrZero,
  duration,
  envName,
  integer,
  nonEmptyText,
  text,
  toggle,
  trustedProxies,
  words,
} from './options.js';
import { flag, variable, type ValuesOf } from './start-option.js';

/** The flags, each with its variable. A name is the flag's as commander names its value (`--max-cells` → `maxCells`). */
export const START_FLAGS = {
  data: flag({
    flag: '--data <dir>',
    parse: text,
    default: './data',
    group: 'instance',
    doc: 'data directory (registry, releases, API data)',
  }),
  env: flag({
    flag: '--env <name>',
    parse: envName,
    default: 'dev',
    group: 'instance',
    doc: "env of the default public host (dev, pro, …); given, it updates that host's env",
  }),
  apis: flag({
    flag: '--apis <dir>',
    parse: text,
    default: null,
    defaultDoc: 'none',
    group: 'instance',
    doc: 'deploy every sub-folder with an api.yaml at boot (a new release only when it changed)',
  }),
  publish: flag({
    flag: '--publish',
    parse: toggle,
    default: false,
    group: 'instance',
    doc: 'make the --apis APIs active and public',
  }),
  watch: flag({
    flag: '--watch',
    parse: toggle,
    default: false,
    group: 'instance',
    doc: 'redeploy an --apis folder when its files change',
  }),

  port: flag({
    flag: '--port <n>',
    parse: integer(0, 65535),
    default: 8080,
    fallbackEnv: 'PORT',
    group: 'network',
    doc: 'HTTP port (0: any free port; PORT, as platforms set it, is read when neither --port nor ANVIL_PORT is given)',
  }),
  listen: flag({
    flag: '--listen <address>',
    parse: text,
    default: '127.0.0.1',
    group: 'network',
    doc: 'address to listen on',
  }),
  headersTimeout: flag({
    flag: '--headers-timeout <duration>',
    parse: duration(),
    default: 10_000,
    group: 'network',
    doc: 'time allowed to receive request headers (408 after)',
  }),
  requestTimeout: flag({
    flag: '--request-timeout <duration>',
    parse: duration(),
    default: 30_000,
    group: 'network',
    doc: 'time an API has to answer (504 after)',
  }),
  drainTimeout: flag({
    flag: '--drain-timeout <duration>',
    parse: duration(),
    default: 30_000,
    group: 'network',
    doc: 'on SIGTERM, time allowed for in-flight work',
  }),
  drainDelay: flag({
    flag: '--drain-delay <duration>',
    parse: duration(0),
    default: 1_000,
    group: 'network',
    doc: 'on SIGTERM, time /anvil/health answers 503 while requests are still served, so a balancer stops sending (0: drain at once)',
  }),
  proxyProtocol: flag({
    flag: '--proxy-protocol',
    parse: toggle,
    default: false,
    group: 'network',
    doc: 'every connection starts with a PROXY protocol v2 header (HAProxy send-proxy-v2) naming the client',
  }),
  trustedProxy: flag({
    flag: '--trusted-proxy <cidrs>',
    parse: trustedProxies,
    default: null,
    defaultDoc: 'none',
    group: 'network',
    doc: 'believe x-forwarded-for from these peers (addresses or CIDRs, comma-separated)',
  }),
  maxConnections: flag({
    flag: '--max-connections <n>',
    parse: integer(1, 10_000_000),
    default: null,
    defaultDoc: `three quarters of the open-files limit, at most ${MAX_DEFAULT_CONNECTIONS}`,
    group: 'network',
    doc: 'client connections at most; beyond it an idle or half-open one of the client holding the most is closed, else 503',
  }),
  maxConnectionsPerClient: flag({
    flag: '--max-connections-per-client <n>',
    parse: integer(1, 10_000_000),
    default: null,
    defaultDoc: `a quarter of \`--max-connections\`, at most ${MAX_DEFAULT_CONNECTIONS_PER_CLIENT}`,
    group: 'network',
    doc: 'connections one client address may hold (--trusted-proxy peers are exempt); beyond it 429',
  }),

  bodyLimit: flag({
    flag: '--body-limit <size>',
    parse: byteSize,
    default: 1024 * 1024,
    group: 'requests',
    doc: 'largest request body an API accepts (413 above)',
  }),
  maxJsonDepth: flag({
    flag: '--max-json-depth <n>',
    parse: integer(1, 100_000),
    default: DEFAULT_MAX_JSON_DEPTH,
    group: 'requests',
    doc: 'deepest nesting of a JSON request body (400 deeper)',
  }),
  maxBusCalls: flag({
    flag: '--max-bus-calls <n>',
    parse: integer(1, 1_000_000),
    default: DEFAULT_BUS_CALLS_PER_REQUEST,
    group: 'requests',
    doc: 'bus calls (LocalCall, Pull, Push, Http to this instance) one request from outside may cause in all, the calls its calls make included (508 beyond)',
  }),
  responseBuffer: flag({
    flag: '--response-buffer <size>',
    parse: byteSize,
    default: 64 * 1024 * 1024,
    group: 'requests',
    doc: 'large response bodies the router holds for slow clients, in all; beyond it the slowest are cut',
  }),
  maxResponseHeaders: flag({
    flag: '--max-response-headers <n>',
    parse: integer(1, 10_000),
    default: DEFAULT_QUOTAS.responseHeaders,
    group: 'requests',
    doc: 'header lines of one API response, each set-cookie value one (500 above)',
  }),
  maxResponseHeaderBytes: flag({
    flag: '--max-response-header-bytes <size>',
    parse: byteSize,
    default: DEFAULT_QUOTAS.responseHeaderBytes,
    group: 'requests',
    doc: 'bytes of the header lines of one API response (500 above)',
  }),

  uploadLimit: flag({
    flag: '--upload-limit <size>',
    parse: byteSize,
    default: 50 * 1024 * 1024,
    group: 'deploys',
    doc: 'largest deploy archive (413 above)',
  }),
  deployTimeout: flag({
    flag: '--deploy-timeout <duration>',
    parse: duration(),
    default: 10_000,
    group: 'deploys',
    doc: 'time a deploy may spend unpacking and validating its files (400 after)',
  }),
  maxQueuedDeploys: flag({
    flag: '--max-queued-deploys <n>',
    parse: integer(1, 10_000),
    default: DEFAULT_MAX_QUEUED_DEPLOYS,
    group: 'deploys',
    doc: 'deploys of one public host under way at once: received, waiting for the deploy worker or in it (429 above)',
  }),

  cells: flag({
    flag: '--cells <n>',
    parse: integer(1, 256),
    default: availableParallelism(),
    defaultDoc: 'the number of CPUs',
    group: 'cells',
    doc: 'cell processes',
  }),
  maxCells: flag({
    flag: '--max-cells <n>',
    parse: integer(3, 512),
    default: null,
    defaultDoc: '`--cells` + 8',
    group: 'cells',
    doc: 'cell processes at most, quarantine and low-priority cells included (at least --cells + 2)',
  }),
  spareThreads: flag({
    flag: '--spare-threads <n>',
    parse: integer(0, 8),
    default: 2,
    group: 'cells',
    doc: 'actor threads each cell keeps loaded for the next API that needs one (0: a cold start loads its thread)',
  }),
  sharedThreads: flag({
    flag: '--shared-threads <n>',
    parse: integer(0, 64),
    default: 1,
    group: 'cells',
    doc: 'threads per cell that serve many quiet APIs at once, each in its own isolate (0: every API gets threads of its own)',
  }),
  maxThreads: flag({
    flag: '--max-threads <n>',
    parse: integer(1, 64),
    default: 2,
    group: 'cells',
    doc: 'threads per API at most',
  }),
  threadConcurrency: flag({
    flag: '--thread-concurrency <n>',
    parse: integer(1, 4096),
    default: 64,
    group: 'cells',
    doc: 'requests in flight per thread before the mailbox is used',
  }),
  mailbox: flag({
    flag: '--mailbox <n>',
    parse: integer(0, 1_000_000),
    default: 256,
    group: 'cells',
    doc: 'requests waiting per API before 503',
  }),
  idleTimeout: flag({
    flag: '--idle-timeout <duration>',
    parse: duration(),
    default: 30_000,
    group: 'cells',
    doc: 'an idle API thread is stopped after this long',
  }),
  hostAbortLimit: flag({
    flag: '--host-abort-limit <n>',
    parse: integer(1, 1000),
    default: DEFAULT_HOST_FAULT_LIMITS.aborts,
    group: 'cells',
    doc: 'APIs of one public host that abort cells within --host-abort-window before all its APIs move to its quarantine cell (after its first, its APIs that start anew start there)',
  }),
  hostAbortWindow: flag({
    flag: '--host-abort-window <duration>',
    parse: duration(1_000),
    default: DEFAULT_HOST_FAULT_LIMITS.windowMs,
    group: 'cells',
    doc: 'how long a cell abort counts towards moving all the APIs of its public host (which stays suspect for good after its first)',
  }),

  maxIsolateMemory: flag({
    flag: '--max-isolate-memory <size>',
    parse: byteSize,
    default: 256 * 1024 * 1024,
    group: 'sandbox',
    doc: "most memory an API may give its custom directives' isolates (api.yaml limits.memoryMb)",
  }),
  maxDirectiveCpu: flag({
    flag: '--max-directive-cpu <duration>',
    parse: duration(),
    default: 1_000,
    group: 'sandbox',
    doc: 'most CPU time per custom directive call an API may set (limits.cpuMs)',
  }),
  maxDirectiveWall: flag({
    flag: '--max-directive-wall <duration>',
    parse: duration(),
    default: 30_000,
    group: 'sandbox',
    doc: 'most wall time per custom directive call an API may set (limits.wallMs)',
  }),

  jobConcurrency: flag({
    flag: '--job-concurrency <n>',
    parse: integer(1, 1024),
    default: 4,
    group: 'jobs',
    doc: 'jobs running at once (at most one per API)',
  }),
  jobBackoff: flag({
    flag: '--job-backoff <duration>',
    parse: duration(),
    default: 1_000,
    group: 'jobs',
    doc: 'wait before the first retry of a failed job (then doubled)',
  }),
  jobLease: flag({
    flag: '--job-lease <duration>',
    parse: duration(500),
    default: 10_000,
    group: 'jobs',
    doc: 'a run holds its job this long, renewed while it lives; a job whose instance died runs again after it',
  }),
  maxJobPayload: flag({
    flag: '--max-job-payload <size>',
    parse: byteSize,
    default: DEFAULT_QUOTAS.jobPayloadBytes,
    group: 'jobs',
    doc: 'largest job payload an API may queue (413 above; api.yaml limits.jobPayloadKb may ask for less)',
  }),
  maxQueuedJobs: flag({
    flag: '--max-queued-jobs <n>',
    parse: integer(1, 10_000_000),
    default: DEFAULT_QUOTAS.queuedJobs,
    group: 'jobs',
    doc: 'jobs of an API queued and not finished (503 above; limits.queuedJobs)',
  }),
  maxQueuedJobBytes: flag({
    flag: '--max-queued-job-bytes <size>',
    parse: byteSize,
    default: DEFAULT_QUOTAS.queuedJobBytes,
    group: 'jobs',
    doc: "payload bytes of an API's jobs queued and not finished, embedded queue (503 above; limits.queuedJobsKb)",
  }),

  maxKvBytes: flag({
    flag: '--max-kv-bytes <size>',
    parse: byteSize,
    default: DEFAULT_QUOTAS.kvBytes,
    group: 'storage',
    doc: 'keys and values an API may keep in the key-value store (507 above; limits.kvKb)',
  }),
  maxFilesBytes: flag({
    flag: '--max-files-bytes <size>',
    parse: byteSize,
    default: DEFAULT_QUOTAS.filesBytes,
    group: 'storage',
    doc: "disk an API's files may take (SaveFile, CachedFileSet; 507 above; limits.filesKb)",
  }),
  maxDatabaseBytes: flag({
    flag: '--max-database-bytes <size>',
    parse: byteSize,
    default: DEFAULT_QUOTAS.databaseBytes,
    group: 'storage',
    doc: "disk an API's SQLite database may take, file and write-ahead log together; the file holds at most half (507 above; limits.databaseKb)",
  }),
  maxHostDisk: flag({
    flag: '--max-host-disk <size>',
    parse: byteSizeOrZero,
    default: DEFAULT_HOST_DISK_BYTES,
    group: 'storage',
    doc: "disk a public host's data may take, all its APIs' databases, files, caches and logs together; over it their writes are refused until deletes make room (507; 0: no total)",
  }),
  maxLogFile: flag({
    flag: '--max-log-file <size>',
    parse: byteSize,
    default: DEFAULT_QUOTAS.logFileBytes,
    group: 'storage',
    doc: "size of an API's log file before the next is opened (limits.logFileKb)",
  }),
  maxLogBytes: flag({
    flag: '--max-log-bytes <size>',
    parse: byteSize,
    default: DEFAULT_QUOTAS.logBytes,
    group: 'storage',
    doc: 'all log files of an API together; the oldest go first (limits.logKb)',
  }),
  maxLogDays: flag({
    flag: '--max-log-days <n>',
    parse: integer(1, 3650),
    default: DEFAULT_QUOTAS.logDays,
    group: 'storage',
    doc: "days an API's log files are kept (limits.logDays)",
  }),

  logFollowers: flag({
    flag: '--log-followers <n>',
    parse: integer(1, 1024),
    default: DEFAULT_FOLLOW_LIMITS.perApi,
    group: 'logs',
    doc: "clients following one API's request log live at once (429 beyond)",
  }),
  logFollowBuffer: flag({
    flag: '--log-follow-buffer <size>',
    parse: byteSize,
    default: DEFAULT_FOLLOW_LIMITS.bufferedBytes,
    group: 'logs',
    doc: 'bytes a log follower may leave unread before it is dropped',
  }),
  auditDays: flag({
    flag: '--audit-days <n>',
    parse: integer(1, 36_500),
    default: DEFAULT_AUDIT_RETENTION.days,
    group: 'logs',
    doc: 'days the audit log keeps an entry',
  }),
  auditRows: flag({
    flag: '--audit-rows <n>',
    parse: integer(1, 100_000_000),
    default: DEFAULT_AUDIT_RETENTION.rows,
    group: 'logs',
    doc: 'entries the audit log keeps at most per public host, and apart for the instance-wide ones (the oldest go first)',
  }),

  placementLease: flag({
    flag: '--placement-lease <duration>',
    parse: duration(500),
    default: 10_000,
    group: 'cluster',
    doc: "cluster mode (DATABASE_URL): how long an owner instance holds an API that keeps data on its disk; a dead owner's APIs move after it",
  }),
  internalListen: flag({
    flag: '--internal-listen <address>',
    parse: text,
    default: null,
    defaultDoc: '`--listen`',
    group: 'cluster',
    doc: 'cluster mode: address of the internal listener other instances forward requests to',
  }),
  internalPort: flag({
    flag: '--internal-port <n>',
    parse: integer(0, 65535),
    default: 0,
    group: 'cluster',
    doc: 'cluster mode: port of the internal listener (0: any free port; others find it in the control plane)',
  }),
  internalAdvertise: flag({
    flag: '--internal-advertise <address>',
    parse: text,
    default: null,
    defaultDoc: '`--internal-listen`',
    group: 'cluster',
    doc: 'cluster mode: the address other instances dial for the internal listener (needed when it binds 0.0.0.0)',
  }),
};

/**
 * The environment variables `anvil start` reads that are no flag (the commands that open the same
 * stores read them too: environment.ts). A name is the instance option's.
 */
export const START_VARIABLES = {
  publicHostKey: variable({
    env: 'ANVIL_PUBLIC_HOST_KEY',
    parse: text,
    default: null,
    defaultDoc: 'the stored key, else one generated at the first start',
    group: 'instance',
    doc: "the default public host's key",
  }),
  egressAllow: variable({
    env: 'ANVIL_EGRESS_ALLOW',
    parse: text,
    default: null,
    defaultDoc: 'none',
    group: 'network',
    doc: 'exceptions to the egress policy: names, addresses, CIDRs, comma-separated (docs/security.md, Egress)',
  }),
  cellNodeFlags: variable({
    env: 'ANVIL_CELL_NODE_FLAGS',
    parse: words,
    default: [],
    defaultDoc: 'none',
    group: 'cells',
    doc: 'more Node flags for the cell processes, space-separated, for diagnostics',
  }),
  cellMalloc: variable({
    env: 'ANVIL_CELL_MALLOC',
    parse: text,
    default: null,
    defaultDoc: '`auto`',
    group: 'cells',
    doc: "the cells' memory allocator: `auto` (tcmalloc's minimal build when one is found, else the system's), `system`, or a library's absolute path",
  }),
  ldPreload: variable({
    env: 'LD_PRELOAD',
    parse: text,
    default: null,
    defaultDoc: 'none',
    group: 'cells',
    doc: "the instance's own preloaded libraries: an allocator there wins over `auto`",
  }),
  logLevel: variable({
    env: 'ANVIL_LOG_LEVEL',
    parse: text,
    default: 'info',
    group: 'logs',
    doc: "the instance log's pino level (`debug`: a line for every request)",
  }),
  metricsToken: variable({
    env: 'ANVIL_METRICS_TOKEN',
    parse: text,
    default: null,
    defaultDoc: 'none: loopback clients only',
    group: 'logs',
    doc: 'lets `GET /anvil/metrics` on the admin host answer a non-loopback client sending `authorization: Bearer <token>`',
  }),
  redisUrl: variable({
    env: 'REDIS_URL',
    parse: text,
    default: null,
    defaultDoc: 'none: embedded stores (SQLite)',
    group: 'cluster',
    doc: 'shared stores and the job queue in this Redis',
  }),
  redisPrefix: variable({
    env: 'ANVIL_REDIS_PREFIX',
    parse: text,
    default: 'anvil:',
    group: 'cluster',
    doc: 'keeps instances that share a Redis apart (tests, several installations)',
  }),
  databaseUrl: variable({
    env: 'DATABASE_URL',
    parse: nonEmptyText,
    default: null,
    defaultDoc: 'none: one instance, its local registry',
    group: 'cluster',
    doc: 'cluster mode: the control plane (hosts, APIs, releases) and the data of `database: postgres` APIs in this PostgreSQL',
  }),
};

/** The whole table: the flags, then the variables that are no flag. */
export const START_OPTIONS = { ...START_FLAGS, ...START_VARIABLES };

export type StartValues = ValuesOf<typeof START_OPTIONS>;
export type StartVariableValues = ValuesOf<typeof START_VARIABLES>;
