/**
 * The ids of APIs and actors, made in one place. An API is one key of one host in one environment
 * (any release); its parts travel as an `ApiId` (an ActorSpec is one) and are formatted into a
 * string only where a string is what is kept: a map key, a hash input, a store namespace, the job
 * queue. None of the parts can contain a `/` (deploy/registry/record-checks.ts), so the string reads back.
 */

export interface ApiId {
  readonly host: string;
  readonly env: string;
  readonly key: string;
}

/**
 * `<host>/<env>/<key>`: the API as one string. Cells are assigned by it (cell/process/assign.ts), the
 * router's fault and CPU records are keyed by it, shared stores namespace the API's data by it,
 * and the job queue stores it with each job.
 */
export function formatApiId(api: ApiId): string {
  return `${api.host}/${api.env}/${api.key}`;
}

/**
 * `<host>/<env>`: what every API of one public host (a tenant) in its env shares, such as the
 * key-value space of RedisGet/RedisSet with `global`. It has one part fewer than any API's id, so
 * the two never meet.
 */
export function formatEnvId(api: Pick<ApiId, 'host' | 'env'>): string {
  return `${api.host}/${api.env}`;
}

/** `<host>/<env>/<key>@<release>`: an actor, one release of an API (unique per release). */
export function formatActorId(api: ApiId, release: string): string {
  return `${formatApiId(api)}@${release}`;
}

/**
 * The parts of a `formatApiId` string, where only the string was kept (a job read back from the
 * queue). A part the string lacks is empty: no API has it.
 */
export function parseApiId(text: string): ApiId {
  const [host = '', env = '', key = ''] = text.split('/');
  return { host, env, key };
}

/** Only the parts: what a long-lived record keeps of a spec. */
export function apiIdOf(api: ApiId): ApiId {
  return { host: api.host, env: api.env, key: api.key };
}

export function sameApi(a: ApiId, b: ApiId): boolean {
  return a.key === b.key && a.host === b.host && a.env === b.env;
}
