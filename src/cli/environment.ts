/**
 * The environment `anvil start` (and the commands that open the same stores) reads: here, once.
 * The instance gets these values as options; only child processes see `process.env` again.
 */
export interface InstanceEnvironment {
  /** ANVIL_PUBLIC_HOST_KEY: the default public host's key. */
  publicHostKey: string | null;
  /** REDIS_URL: shared stores and the job queue in Redis. */
  redisUrl: string | null;
  /** DATABASE_URL: cluster mode: the control plane (hosts, APIs, releases) and the data of `database: postgres` APIs in this PostgreSQL. */
  databaseUrl: string | null;
  /** ANVIL_REDIS_PREFIX (default `anvil:`): keeps instances that share a Redis apart (tests, several installations). */
  redisPrefix: string;
  /** ANVIL_EGRESS_ALLOW: exceptions to the egress policy. */
  egressAllow: string | null;
  /** ANVIL_METRICS_TOKEN: bearer token for the metrics. */
  metricsToken: string | null;
  /** ANVIL_CELL_NODE_FLAGS: more Node flags for the cell processes, space-separated. */
  cellNodeFlags: string[];
  /** ANVIL_CELL_MALLOC: the cells' memory allocator (`auto`, `system`, or a library's path; see cell/process/cell-allocator.ts). */
  cellMalloc: string | null;
  /** LD_PRELOAD as the instance was started with (an operator's own allocator wins over `auto`). */
  ldPreload: string | null;
  /** ANVIL_LOG_LEVEL (default `info`): the instance log's pino level. */
  logLevel: string;
}

export function readInstanceEnvironment(env: NodeJS.ProcessEnv = process.env): InstanceEnvironment {
  return {
    publicHostKey: env.ANVIL_PUBLIC_HOST_KEY ?? null,
    redisUrl: env.REDIS_URL ?? null,
    databaseUrl: env.DATABASE_URL || null,
    redisPrefix: env.ANVIL_REDIS_PREFIX ?? 'anvil:',
    egressAllow: env.ANVIL_EGRESS_ALLOW ?? null,
    metricsToken: env.ANVIL_METRICS_TOKEN ?? null,
    cellNodeFlags: (env.ANVIL_CELL_NODE_FLAGS ?? '').split(' ').filter(Boolean),
    cellMalloc: env.ANVIL_CELL_MALLOC ?? null,
    ldPreload: env.LD_PRELOAD ?? null,
    logLevel: env.ANVIL_LOG_LEVEL ?? 'info',
  };
}
