/** The shapes the api.yaml loader produces and that a release stores (compiled.json). */

export const VERBS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;
export type Verb = (typeof VERBS)[number];
export const CATCH_ALL_PATH = '/requests';

export interface SourcePosition {
  file: string;
  line: number;
  column: number;
}

export interface EntryDefinition {
  /** The YAML map key of the entry, unique within its list. */
  label: string;
  directive: string;
  /** Lower-cased group names; `['normal_flow']` when the entry names none. */
  groups: string[];
  /** Every field of the entry except `directive` and `groups`, as written (aliases unresolved). */
  params: Record<string, unknown>;
  where: SourcePosition;
}

export interface EndpointDefinition {
  /** `all` only with the path `/requests` (the catch-all). */
  verb: Verb | 'all';
  /** Normalised: leading `/`, no trailing `/` (except the root `/`). */
  path: string;
  entries: EntryDefinition[];
  where: SourcePosition;
}

/** Sandbox limits an API asks for in api.yaml (each capped by the instance's maximum). */
export interface SandboxLimits {
  /** Isolate memory, MiB. */
  memoryMb: number;
  /** CPU time per custom directive call, ms. */
  cpuMs: number;
  /** Wall time per custom directive call, awaits included, ms. */
  wallMs: number;
}

/**
 * Quotas an API asks for in api.yaml (`limits:`) on what every API shares, each capped by the
 * instance's ceiling (src/shared/quotas/api-quotas.ts). Sizes in KiB.
 */
export interface QuotaLimits {
  jobPayloadKb: number;
  queuedJobs: number;
  queuedJobsKb: number;
  kvKb: number;
  logFileKb: number;
  logKb: number;
  logDays: number;
  filesKb: number;
  databaseKb: number;
}

/** Everything `limits:` of api.yaml may set. */
export type ApiLimits = SandboxLimits & QuotaLimits;

export type CompatMode = 'hefesto';
/** api.yaml `database:`: the API's own SQLite file (default), or its own schema in the cluster's Postgres. */
export type DatabaseMode = 'sqlite' | 'postgres';

export interface ApiDefinition {
  key: string;
  /** When true, messages of errors >= 500 are sent to clients instead of a generic text. */
  debug: boolean;
  /** `compat: hefesto`: the original's answers where Anvil's differ (docs/migrating.md). */
  compat?: CompatMode;
  /** `database: postgres` (absent: sqlite, so a release of an API that does not say stays as it was). */
  database?: 'postgres';
  /** Only the limits api.yaml sets; the instance fills in the rest. */
  limits: Partial<ApiLimits>;
  before: EntryDefinition[];
  endpoints: EndpointDefinition[];
  after: EntryDefinition[];
}

/** Everything an actor needs to run one release; written by deploy, read by actor threads. */
export interface CompiledRelease {
  format: 1;
  key: string;
  host: string;
  env: string;
  release: string;
  createdAt: string;
  /** Hash of the deployed files and env: a redeploy with the same digest makes no new release. */
  digest: string;
  definition: ApiDefinition;
  /** Maps/<name>.json with Maps/<env>/<name>.json deep-merged over it, by name. */
  maps: Record<string, unknown>;
  /** Names of the custom directives found in Directives/. */
  customDirectives: string[];
  /** Each custom directive compiled at deploy time to a script defining DIRECTIVE_GLOBAL (its exports). */
  directiveCode: Record<string, string>;
  /** Each custom directive's source map (its compiled code back to its file), for error positions; absent in releases staged before. */
  directiveMaps?: Record<string, string>;
  /**
   * The release reads or writes the API's own data on the instance's disk (deploy/releases/local-state.ts):
   * in cluster mode it is placed on one owner instance. Absent in releases staged before: taken as true.
   */
  localState?: boolean;
}

/** The variable a compiled custom directive's script assigns its exports to. */
export const DIRECTIVE_GLOBAL = '__anvilDirective';

/** A problem in an API folder, pointing at the file, line and column, and the entry's label. */
export interface ConfigError {
  file: string;
  line: number;
  column: number;
  /** `before › CheckKey`, `get /users › ReadUser`, or null when no entry is involved. */
  label: string | null;
  message: string;
}

export function formatConfigError(error: ConfigError): string {
  const label = error.label === null ? '' : ` [${error.label}]`;
  return `${error.file}:${error.line}:${error.column}${label} ${error.message}`;
}
