import { QUOTA_NAMES } from './quota-names.js';
import type { LockHolder } from './lock-holder.js';
import { AnvilError, DataDirInUseError, QuotaError, RegistryValidationError } from './anvil-error.js';

/**
 * The catalogue: every error code Anvil raises on purpose, with its HTTP status and message
 * template (`%s` takes the arguments in order), in one table. Make an error with
 * `Errors.someName(args…)`; `npm run docs` writes the table into docs/operate.md.
 */

type Arg = string | number;

/** What the catalogue knows of an entry; `status: 'caller'` is chosen where the error is made. */
export interface CatalogueEntry {
  readonly code: string;
  readonly status: number | 'caller';
  readonly template: string;
  readonly logged: boolean;
}

export type ErrorFactory = ((...args: Arg[]) => AnvilError) & CatalogueEntry & { readonly status: number };
export type StatusErrorFactory = ((status: number, ...args: Arg[]) => AnvilError) & CatalogueEntry;
export type QuotaErrorFactory = ((...args: Arg[]) => QuotaError) & CatalogueEntry & { readonly status: number };
export type RegistryErrorFactory = ((field: string, detail: string) => RegistryValidationError) &
  CatalogueEntry & { readonly status: number };
export type DataDirErrorFactory = ((dataDir: string, lockFile: string, holder: LockHolder) => DataDirInUseError) &
  CatalogueEntry & { readonly status: number };

function fill(template: string, args: Arg[]): string {
  let i = 0;
  return template.replace(/%s/g, () => String(args[i++] ?? ''));
}

/** An error with a fixed status; `retryAfterSeconds` is sent as `retry-after`. */
function coded(
  code: string,
  status: number,
  template: string,
  logged = false,
  retryAfterSeconds?: number,
): ErrorFactory {
  const make = (...args: Arg[]) => new AnvilError(code, status, fill(template, args), logged, retryAfterSeconds);
  return Object.assign(make, { code, status, template, logged });
}

/** An error whose status the API chose (ThrowError, a custom directive's failure, ctx.fail). */
function codedWithStatus(code: string, template: string): StatusErrorFactory {
  const make = (status: number, ...args: Arg[]) => new AnvilError(code, status, fill(template, args));
  return Object.assign(make, { code, status: 'caller' as const, template, logged: false });
}

/** A quota refusal, counted under `quota`; `retryAfterSeconds` is sent as `retry-after`. */
function quota(
  code: string,
  status: number,
  template: string,
  name: string,
  retryAfterSeconds?: number,
): QuotaErrorFactory {
  const make = (...args: Arg[]) => new QuotaError(code, status, fill(template, args), name, retryAfterSeconds);
  return Object.assign(make, { code, status, template, logged: false });
}

/** A refused registry argument: the template's first `%s` is the field, which the error also carries. */
function registryRefusal(code: string, status: number, template: string): RegistryErrorFactory {
  const make = (field: string, detail: string) =>
    new RegistryValidationError(code, status, fill(template, [field, detail]), field);
  return Object.assign(make, { code, status, template, logged: false });
}

/** A start refused on a data directory another live instance holds: the holder fills the template. */
function dataDirRefusal(code: string, status: number, template: string): DataDirErrorFactory {
  const make = (dataDir: string, lockFile: string, holder: LockHolder) => {
    const port = holder.port === null ? '' : `, port ${holder.port}`;
    return new DataDirInUseError(
      code,
      status,
      fill(template, [dataDir, holder.pid, holder.startedAt, port, lockFile]),
      dataDir,
      lockFile,
      holder,
    );
  };
  return Object.assign(make, { code, status, template, logged: false });
}

/** Seconds a client is told to wait when the API's job queue is full. */
export const QUEUE_FULL_RETRY_AFTER_S = 5;
/** Seconds a public host is told to wait when it has its bound of deploys under way. */
export const DEPLOY_QUEUE_RETRY_AFTER_S = 5;

export const Errors = {
  // The router and the cells.
  notFound: coded('ANVIL_ERR_NOT_FOUND', 404, 'Not Found'),
  bodyTooLarge: coded('ANVIL_ERR_BODY_TOO_LARGE', 413, 'Request body larger than %s bytes'),
  jsonTooDeep: coded(
    'ANVIL_ERR_JSON_TOO_DEEP',
    400,
    'Bad Request: the JSON body is nested deeper than %s levels',
    true,
  ),
  mailboxFull: coded('ANVIL_ERR_MAILBOX_FULL', 503, 'Service Unavailable: the API is busy, retry later'),
  paused: coded('ANVIL_ERR_PAUSED', 503, 'Service Unavailable: the API is paused after crashing its cell, retry later'),
  hostPaused: coded(
    'ANVIL_ERR_HOST_PAUSED',
    503,
    'Service Unavailable: every API of host %s is paused: %s of its APIs crashed cells within %s (--host-abort-limit, --host-abort-window), retry later',
  ),
  notReady: coded('ANVIL_ERR_NOT_READY', 503, 'Service Unavailable'),
  cellDied: coded('ANVIL_ERR_CELL_DIED', 502, 'Bad Gateway: the API stopped while handling the request'),
  actorFailed: coded('ANVIL_ERR_ACTOR_FAILED', 502, 'Bad Gateway: the API could not start'),
  timeout: coded('ANVIL_ERR_TIMEOUT', 504, 'Gateway Timeout'),
  ownerTimeout: coded('ANVIL_ERR_TIMEOUT', 504, 'Gateway Timeout: the owner of the API did not answer in time'),
  busTooDeep: coded('ANVIL_ERR_LOOP', 508, 'Loop Detected: more than %s nested calls between APIs'),
  internal: coded('ANVIL_ERR_INTERNAL', 500, 'Internal Server Error'),
  // The HTTP edge: what the router answers before a request reaches an API.
  badTarget: coded('ANVIL_ERR_BAD_TARGET', 400, 'Bad Request: the request target must be a path'),
  badRequestHead: coded('ANVIL_ERR_BAD_REQUEST_HEAD', 400, '%s'),
  unparsableRequest: coded('ANVIL_ERR_BAD_REQUEST', 400, 'Bad Request'),
  requestTimeout: coded('ANVIL_ERR_REQUEST_TIMEOUT', 408, 'Request Timeout'),
  headersTooLarge: coded('ANVIL_ERR_HEADERS_TOO_LARGE', 431, 'Request Header Fields Too Large'),
  responseHeadRefused: coded(
    'ANVIL_ERR_RESPONSE_HEAD',
    502,
    'Bad Gateway: the API produced a response head the router does not send (%s)',
  ),
  responseHeadInvalid: coded('ANVIL_ERR_RESPONSE_HEAD', 502, 'Bad Gateway: the API produced an invalid response head'),
  methodNotAllowed: coded('ANVIL_ERR_METHOD_NOT_ALLOWED', 405, 'Method Not Allowed'),

  // The engine and the built-in directives.
  badParameter: coded('ANVIL_ERR_BAD_PARAMETER', 500, 'parameter %s of "%s": %s'),
  unknownDirective: coded('ANVIL_ERR_UNKNOWN_DIRECTIVE', 500, 'there is no directive "%s" (run by "%s")'),
  hostMemory: coded(
    'ANVIL_ERR_HOST_MEMORY',
    500,
    "memory limit: storing %s would make this request hold more than the API's %s MiB outside its isolates",
    true,
  ),
  invalidHeader: coded('ANVIL_ERR_INVALID_HEADER', 500, 'invalid response header: %s'),
  informationalStatus: coded(
    'ANVIL_ERR_INFORMATIONAL_STATUS',
    500,
    'the response status is %s, an informational (1xx) status, which cannot be a final answer (200 to 599)',
  ),
  fail: codedWithStatus('ANVIL_ERR_FAIL', '%s'),
  thrown: codedWithStatus('ANVIL_ERR_THROWN', '%s'),
  unauthorized: coded('ANVIL_ERR_UNAUTHORIZED', 401, 'Unauthorized'),
  rateLimited: coded('ANVIL_ERR_RATE_LIMITED', 429, 'Too Many Requests'),
  // The router's connection bounds (front/edge/connection-gate.ts): sent on the connection, which is then closed.
  clientConnections: coded(
    'ANVIL_ERR_CLIENT_CONNECTIONS',
    429,
    'Too Many Requests: this client address already has %s connections open, the limit per client (--max-connections-per-client)',
  ),
  connectionsFull: coded(
    'ANVIL_ERR_CONNECTIONS_FULL',
    503,
    'Service Unavailable: the instance holds %s connections, its limit (--max-connections), each with a request in flight; retry later',
    false,
    1,
  ),
  rateStoreDown: coded('ANVIL_ERR_RATE_STORE', 503, 'Service Unavailable: the rate limit store cannot be reached'),
  viewFailed: coded('ANVIL_ERR_VIEW', 500, 'View: %s'),
  viewBadName: coded('ANVIL_ERR_VIEW', 500, 'View: %s name "%s" %s'),
  staticTooLarge: coded('ANVIL_ERR_STATIC_TOO_LARGE', 500, 'ServeStatic: "%s" is larger than %s'),
  fileChangedWhileSent: coded(
    'ANVIL_ERR_STATIC_CHANGED',
    503,
    'Service Unavailable: the file changed while it was being served, retry',
    false,
    1,
  ),
  staticChanged: coded('ANVIL_ERR_STATIC_CHANGED', 503, 'the file %s changed while it was being served'),
  enqueueFailed: codedWithStatus('ANVIL_ERR_ENQUEUE', 'the job could not be queued: %s'),
  pullSchemaMismatch: coded(
    'ANVIL_ERR_PULL_SCHEMA',
    502,
    'the answer of %s does not match the schema Maps/%s.json: %s',
  ),
  pullSchemaMissing: coded(
    'ANVIL_ERR_PULL_SCHEMA_MAP',
    500,
    'Pull: there is no map "%s" to check the answer against (Maps/%s.json)',
  ),
  pullSchemaBroken: coded(
    'ANVIL_ERR_PULL_SCHEMA_MAP',
    500,
    'Pull: Maps/%s.json is not a JSON Schema that compiles: %s',
  ),
  jobRecordNoJob: coded(
    'ANVIL_ERR_JOB_RECORD',
    500,
    'WriteToJob: this flow has no job id (it runs in a job, or after ForTheWorker in the request that queued it)',
  ),
  jobRecordNull: coded(
    'ANVIL_ERR_JOB_RECORD',
    500,
    'WriteToJob: value is null; a job record is a map, a list, a string, a number or a boolean',
  ),
  jobRecordNotFound: coded(
    'ANVIL_ERR_JOB_NOT_FOUND',
    404,
    'job %s not found (not queued by this API with identifier, or its record expired)',
  ),
  badRequest: coded('ANVIL_ERR_BAD_REQUEST', 400, 'Bad Request: %s'),
  clientQuotaExceeded: coded(
    'ANVIL_ERR_CLIENT_QUOTA',
    429,
    'Too Many Requests: the %s quota of %s requests is used up',
  ),

  // The API's files (SaveFile, ReadFile, DeleteFile, FileSize, CachedFileGet/Set): names are the
  // API's own input (often a client's), so a refusal says why.
  fileBadName: coded('ANVIL_ERR_FILE_NAME', 400, '%s: the file name %s is refused: %s'),
  fileOutside: coded('ANVIL_ERR_FILE_OUTSIDE', 403, "%s: %s leads outside the API's files (a link)"),
  fileNotFound: coded('ANVIL_ERR_FILE_NOT_FOUND', 404, '%s: no file %s'),
  fileConflict: coded('ANVIL_ERR_FILE_CONFLICT', 409, '%s: %s'),
  fileTooLarge: coded('ANVIL_ERR_FILE_TOO_LARGE', 500, '%s: %s is larger than %s'),
  fileNotJson: coded('ANVIL_ERR_FILE_NOT_JSON', 500, '%s: %s is not JSON: %s'),
  fileFailed: coded('ANVIL_ERR_FILE', 500, '%s: %s'),
  statusCheckFailed: codedWithStatus('ANVIL_ERR_CHECK_STATUS', '%s'),

  // Models (ValidateModel, LoadAndValidateModel, XmlToModel): the client's input is refused with
  // a 4xx that says why; a schema that cannot be used is the API's own failure, a 500.
  modelInvalid: coded('ANVIL_ERR_MODEL_INVALID', 400, '%s'),
  modelBodyNotJson: coded('ANVIL_ERR_MODEL_BODY_NOT_JSON', 400, 'Bad Request: the request body is not valid JSON (%s)'),
  modelServerSide: coded('ANVIL_ERR_MODEL_SERVER_SIDE', 502, 'Server Side Error'),
  modelSchema: coded('ANVIL_ERR_MODEL_SCHEMA', 500, '%s: %s'),
  xmlTooLarge: coded('ANVIL_ERR_XML_TOO_LARGE', 413, 'XmlToModel: the XML is %s bytes, over the limit of %s bytes'),
  xmlMalformed: coded('ANVIL_ERR_XML_MALFORMED', 400, 'XmlToModel: malformed XML: %s'),

  // Calls to other APIs (the bus) and to the outside (upstreams).
  busCallTimeout: coded('ANVIL_ERR_UPSTREAM_TIMEOUT', 504, 'the call to %s took longer than %s ms'),
  busClosed: coded('ANVIL_ERR_BUS_CLOSED', 502, 'the in-process bus closed'),
  enqueueRouterGone: coded('ANVIL_ERR_ENQUEUE_ROUTER_GONE', 503, 'the job was not stored: the router went away'),
  enqueueRefused: codedWithStatus('ANVIL_ERR_ENQUEUE', '%s'),
  upstreamBadUrl: coded('ANVIL_ERR_UPSTREAM_URL', 500, '"%s%s" is not a valid URL'),
  upstreamBadProtocol: coded('ANVIL_ERR_UPSTREAM_URL', 500, 'only http and https upstreams are allowed, not %s'),
  upstreamTooLarge: coded('ANVIL_ERR_UPSTREAM_TOO_LARGE', 502, 'the upstream answer is larger than %s bytes'),
  upstreamTimeout: coded('ANVIL_ERR_UPSTREAM_TIMEOUT', 504, '%s did not answer within %s ms'),
  upstreamFailed: coded('ANVIL_ERR_UPSTREAM', 502, '%s: %s'),
  upstreamStatus: coded('ANVIL_ERR_UPSTREAM_STATUS', 502, '%s answered %s'),
  upstreamLoop: coded('ANVIL_ERR_LOOP', 508, 'Loop Detected: %s is part of a cycle of calls between APIs'),
  egressDenied: coded(
    'ANVIL_ERR_EGRESS_DENIED',
    502,
    'outgoing connection to %s (%s) refused: private, loopback and link-local addresses are not reachable (ANVIL_EGRESS_ALLOW)%s',
  ),

  // Custom directives in their sandbox.
  sandboxUnknownDirective: coded('ANVIL_ERR_SANDBOX', 500, 'unknown custom directive %s'),
  sandboxClosed: coded('ANVIL_ERR_SANDBOX_CLOSED', 503, 'the sandbox is closed: the thread is stopping'),
  sandboxCpu: coded('ANVIL_ERR_SANDBOX_CPU', 500, '%s used more than its %s ms of CPU time'),
  sandboxWall: coded('ANVIL_ERR_SANDBOX_WALL', 504, '%s ran longer than its %s ms'),
  sandboxMemory: coded('ANVIL_ERR_SANDBOX_MEMORY', 500, '%s used more than its %s MiB of memory'),
  sandboxValueSize: coded(
    'ANVIL_ERR_SANDBOX_VALUE_SIZE',
    500,
    "%s: %s would take more than the API's %s MiB memory limit out of its sandbox (api.yaml limits.memoryMb)",
    true,
  ),
  sandboxCrashed: coded('ANVIL_ERR_DIRECTIVE_FAILED', 500, '%s: the sandbox failed: %s'),
  sandboxReset: coded('ANVIL_ERR_SANDBOX_RESET', 503, '%s: its sandbox was reset (%s); retry'),
  sandboxBusy: coded(
    'ANVIL_ERR_SANDBOX_BUSY',
    503,
    '%s was stopped after %s ms in which the busy host ran it for only %s ms; retry',
  ),
  sandboxBadCall: coded('ANVIL_ERR_SANDBOX_CALL', 500, '%s'),
  sandboxTooDeep: coded(
    'ANVIL_ERR_SANDBOX_DEPTH',
    508,
    'Loop Detected: running %s would nest custom directives (state.run) more than %s deep',
  ),
  sandboxTooManyRuns: coded(
    'ANVIL_ERR_SANDBOX_RUNS',
    500,
    '%s: state.run("%s") refused: the call already has %s runs under way (state.run calls not settled yet); await some before starting more',
  ),
  directiveFailed: codedWithStatus('ANVIL_ERR_DIRECTIVE_FAILED', '%s'),

  // The data directory's disk (an API's database, a deploy's files).
  diskFull: coded('ANVIL_ERR_DISK_FULL', 507, 'the disk is full, nothing was written: %s'),

  // The API's SQLite database.
  sqlFailed: coded('ANVIL_ERR_SQL', 500, 'SQL error: %s'),
  sqlConstraint: coded('ANVIL_ERR_SQL_CONSTRAINT', 409, 'SQL error: %s'),
  sqlBusy: coded('ANVIL_ERR_SQL_BUSY', 503, 'SQL error: %s'),
  sqlLimit: coded('ANVIL_ERR_SQL_LIMIT', 500, '%s'),
  sqlRefused: coded('ANVIL_ERR_SQL_REFUSED', 500, 'SQL refused: %s'),
  transactionAlreadyOpen: coded(
    'ANVIL_ERR_TRANSACTION',
    500,
    'DatabaseBeginTransaction: this request already has a transaction open (transactions do not nest)',
  ),
  transactionNotOpen: coded(
    'ANVIL_ERR_TRANSACTION',
    500,
    '%s: this request has no transaction open (never begun, already committed, or rolled back when a directive failed or its pass ended)',
  ),
  transactionBusy: coded(
    'ANVIL_ERR_TRANSACTION_BUSY',
    503,
    "the API's database is held by another request's transaction on this thread: %s",
  ),
  migrationsUnreadable: coded('ANVIL_ERR_MIGRATION', 500, 'migrations in %s: %s'),
  migrationFailed: coded('ANVIL_ERR_MIGRATION', 500, 'migration %s failed: %s'),

  // The key-value store: misuse is a 500 of the directive that made the call; a store that cannot
  // be reached is a 503, so a caller such as RateLimit can tell "store down" from a bug.
  kvBadArgument: coded('ANVIL_ERR_KV_BAD_ARGUMENT', 500, 'key-value store: %s'),
  kvKeyTooLong: coded('ANVIL_ERR_KV_KEY_TOO_LONG', 500, 'key-value store: the key is %s bytes, the limit is %s bytes'),
  kvValueTooLarge: coded(
    'ANVIL_ERR_KV_VALUE_TOO_LARGE',
    500,
    'key-value store: the value is %s bytes, the limit is %s bytes',
  ),
  kvNotInteger: coded(
    'ANVIL_ERR_KV_NOT_INTEGER',
    500,
    'key-value store: increment on a key whose value is not an integer',
  ),
  kvOutOfRange: coded(
    'ANVIL_ERR_KV_OUT_OF_RANGE',
    500,
    'key-value store: the counter would leave the safe integer range (±2^53-1); it was left unchanged',
  ),
  kvUnavailable: coded('ANVIL_ERR_KV_UNAVAILABLE', 503, 'key-value store unavailable: %s'),
  kvClosed: coded('ANVIL_ERR_KV_CLOSED', 503, 'key-value store: the backend is closed'),
  kvFailed: coded('ANVIL_ERR_KV_FAILED', 500, 'key-value store: %s'),

  // The job queue: misuse is a 500; a queue that cannot reach its store or is closed is a 503, so
  // ForTheWorker can answer "retry later" rather than a bug.
  jobsBadArgument: coded('ANVIL_ERR_JOBS_BAD_ARGUMENT', 500, 'job queue: %s'),
  jobsUnavailable: coded('ANVIL_ERR_JOBS_UNAVAILABLE', 503, 'job queue unavailable: %s'),
  jobsClosed: coded('ANVIL_ERR_JOBS_CLOSED', 503, 'job queue: the queue is closed'),
  jobsAlreadyStarted: coded('ANVIL_ERR_JOBS_STARTED', 500, 'job queue: start() was already called on this queue'),
  jobsFailed: coded('ANVIL_ERR_JOBS_FAILED', 500, 'job queue: %s'),

  // The registry and the data directory. A registry refusal reaches HTTP only from a deploy whose
  // input was checked already (e.g. its host was removed meanwhile): the server's failure, a 500.
  // A refused start is printed by `anvil start` (exit 1), never sent: 409, the data directory is taken.
  registryInvalid: registryRefusal('ANVIL_ERR_REGISTRY_INVALID', 500, '%s: %s'),
  // Cluster mode (DATABASE_URL): the control plane in Postgres. Unreachable, a management write is
  // refused with 503 and the APIs keep serving from each instance's local replica.
  controlPlaneUnavailable: coded(
    'ANVIL_ERR_CONTROL_PLANE_UNAVAILABLE',
    503,
    'the control plane (PostgreSQL, DATABASE_URL) cannot be reached: management writes are refused until it is back; the APIs keep serving',
    true,
    5,
  ),
  controlPlaneStart: coded(
    'ANVIL_ERR_CONTROL_PLANE_START',
    503,
    'cluster mode: the control plane at DATABASE_URL=%s cannot be used: %s',
    true,
  ),
  controlPlaneSchema: coded(
    'ANVIL_ERR_CONTROL_PLANE_SCHEMA',
    500,
    "control plane: the database's schema version %s is newer than this Anvil's (%s)",
    true,
  ),
  controlPlaneRelease: coded(
    'ANVIL_ERR_CONTROL_PLANE_RELEASE',
    500,
    'control plane: release %s could not be fetched: %s',
    true,
  ),
  // The management API: a public host's deploys under way (receiving, waiting, in the deploy worker) are bounded.
  deployQueueFull: coded(
    'ANVIL_ERR_DEPLOY_QUEUE_FULL',
    429,
    'Too Many Requests: this public host already has %s deploys under way (being received, waiting for the deploy worker or in it), its limit (--max-queued-deploys); retry later',
  ),
  // The admin host's endpoints (front/admin/admin-routes.ts), for operators: said in full.
  unknownApi: coded('ANVIL_ERR_UNKNOWN_API', 404, 'unknown API "%s"'),
  unknownRelease: coded('ANVIL_ERR_UNKNOWN_RELEASE', 404, 'unknown release "%s" of API "%s"'),
  apiActive: coded('ANVIL_ERR_API_ACTIVE', 409, 'API "%s" is active: disable it first (PUT {"active": false, …})'),
  badQuery: coded('ANVIL_ERR_BAD_QUERY', 400, '%s'),
  badManagementBody: coded('ANVIL_ERR_BAD_BODY', 400, '%s'),
  managementBodyTooLarge: coded('ANVIL_ERR_BODY_TOO_LARGE', 413, 'body too large'),
  deployRefused: codedWithStatus('ANVIL_ERR_DEPLOY_REFUSED', '%s'),
  jobQueueUnreadable: coded('ANVIL_ERR_JOBS_UNAVAILABLE', 503, 'the job queue cannot be read: %s', false, 5),
  jobQueueUnchanged: coded('ANVIL_ERR_JOBS_UNAVAILABLE', 503, 'the job queue cannot be changed: %s', false, 5),
  unknownJobAction: coded('ANVIL_ERR_UNKNOWN_JOB_ACTION', 404, 'unknown job action "%s" (%s)'),
  logFollowersFull: coded(
    'ANVIL_ERR_LOG_FOLLOWERS',
    429,
    'the request log of "%s" has as many followers as it may have: try again when one has left',
    false,
    5,
  ),
  consoleFileMissing: coded('ANVIL_ERR_CONSOLE_FILE', 404, 'no console file "%s"'),
  internalOperation: coded('ANVIL_ERR_INTERNAL_OPERATION', 400, '%s'),
  // Cluster mode: an API keeping data on an instance's disk is served by its owner instance only.
  placementUnavailable: coded('ANVIL_ERR_PLACEMENT_UNAVAILABLE', 503, 'placement: %s; retry later'),
  dataDirInUse: dataDirRefusal(
    'ANVIL_ERR_DATA_DIR_IN_USE',
    409,
    'data directory %s is in use by another Anvil instance: PID %s (started %s%s), according to %s. Stop that instance first, or start this one with another --data.',
  ),

  // An API's quotas on shared stores: messages written for its clients, shown whatever the status.
  quotaBusCalls: quota(
    'ANVIL_ERR_QUOTA_BUS_CALLS',
    508,
    "Loop Detected: the call to %s was not made: one request from outside may cause at most --max-bus-calls calls between APIs in all (1000 by default), its calls' calls included, and this request's share is used up",
    QUOTA_NAMES.busCalls,
  ),
  quotaJobPayload: quota(
    'ANVIL_ERR_QUOTA_JOB_PAYLOAD',
    413,
    "the job is %s bytes, over this API's job payload quota of %s bytes (api.yaml limits.jobPayloadKb, at most --max-job-payload)",
    QUOTA_NAMES.jobPayload,
  ),
  quotaQueuedJobs: quota(
    'ANVIL_ERR_QUOTA_QUEUED_JOBS',
    503,
    'this API already has %s jobs queued and not finished, its quota (api.yaml limits.queuedJobs, at most --max-queued-jobs); retry later',
    QUOTA_NAMES.queuedJobs,
    QUEUE_FULL_RETRY_AFTER_S,
  ),
  quotaQueuedJobBytes: quota(
    'ANVIL_ERR_QUOTA_QUEUED_JOB_BYTES',
    503,
    "this job would make the payloads of the API's jobs queued and not finished %s bytes, over its quota of %s bytes (api.yaml limits.queuedJobsKb, at most --max-queued-job-bytes); retry later",
    QUOTA_NAMES.queuedJobBytes,
    QUEUE_FULL_RETRY_AFTER_S,
  ),
  quotaKvBytes: quota(
    'ANVIL_ERR_QUOTA_KV_BYTES',
    507,
    "this write would make the API's keys and values in the key-value store %s bytes, over its quota of %s bytes (api.yaml limits.kvKb, at most --max-kv-bytes)",
    QUOTA_NAMES.kvBytes,
  ),
  // A public host's disk total (--max-host-disk), measured by the router every few seconds: writes
  // that make data grow are refused while the host is over it, deletes pass.
  quotaHostDisk: quota(
    'ANVIL_ERR_QUOTA_HOST_DISK',
    507,
    "the public host %s takes %s bytes of disk (its APIs' databases, files, caches and logs), over its quota of %s bytes (--max-host-disk): writes are refused until deletes bring it back under",
    QUOTA_NAMES.hostDisk,
  ),
  quotaFilesBytes: quota(
    'ANVIL_ERR_QUOTA_FILES_BYTES',
    507,
    "this write would make the API's files take %s bytes of disk, over its quota of %s bytes (api.yaml limits.filesKb, at most --max-files-bytes)",
    QUOTA_NAMES.filesBytes,
  ),
  // What the router holds of one response's head for a client: counted in the thread, refused whole.
  quotaResponseHeaders: quota(
    'ANVIL_ERR_QUOTA_RESPONSE_HEADERS',
    500,
    'the response has %s header lines, over the limit of %s per response (--max-response-headers; each set-cookie value is one)',
    QUOTA_NAMES.responseHeaders,
  ),
  quotaResponseHeaderBytes: quota(
    'ANVIL_ERR_QUOTA_RESPONSE_HEADER_BYTES',
    500,
    "the response's header lines take %s bytes, over the limit of %s bytes per response (--max-response-header-bytes)",
    QUOTA_NAMES.responseHeaderBytes,
  ),
  quotaDatabaseBytes: quota(
    'ANVIL_ERR_QUOTA_DATABASE_BYTES',
    507,
    "this write would make the API's database file larger than %s bytes (%s pages), half its disk quota of %s bytes; the other half is room for its write-ahead log (api.yaml limits.databaseKb, at most --max-database-bytes); nothing was written",
    QUOTA_NAMES.databaseBytes,
  ),
  quotaDatabaseLog: quota(
    'ANVIL_ERR_QUOTA_DATABASE_BYTES',
    507,
    "the API's database write-ahead log is %s bytes and cannot be emptied while another of its statements uses the database; writes wait for that under its disk quota of %s bytes (api.yaml limits.databaseKb, at most --max-database-bytes); retry",
    QUOTA_NAMES.databaseBytes,
  ),
} as const;

/** A quota refusal that crossed a thread as code, status and message (the quota's name stays behind). */
export function quotaErrorFromWire(
  code: string,
  status: number,
  message: string,
  retryAfterSeconds?: number,
): QuotaError {
  return new QuotaError(code, status, message, '', retryAfterSeconds);
}
