/**
 * Keys that directives keep in an API's key space, each kind under its own prefix, so that a key
 * an API chooses (RedisSet's `key`, a job id from a path) never spells one of another kind: Pull's
 * cache is `pull:…`, RateLimit's counters `ratelimit:…`, CacheStatic's answers `static:…`.
 */

/** RedisGet / RedisSet: the API's own `key`. */
export function dataKey(key: string): string {
  return `data:${key}`;
}

/** The record of a job (ForTheWorker `identifier`, WriteToJob, ReadJob). */
export function jobRecordKey(jobId: string): string {
  return `job:${jobId}`;
}
