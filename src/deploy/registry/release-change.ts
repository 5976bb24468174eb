import type { ApiRecord } from './records.js';

/** What a `PUT /anvil/api/<key>` does to an API, for the metrics and the operator endpoints. */
export type ReleaseChange = 'publish' | 'disable' | 'rollback' | 'update';

/**
 * What a PUT of an API's record does, in an operator's words (publish, disable and rollback are all
 * this one call, SPEC §6), for the audit log, the metrics and the operator endpoints: an older
 * release is a rollback (release ids sort by time, release-id.ts); inactive is a disable; active and
 * public is a publish; anything else (active but private, an unknown API) is an update.
 */
export function releaseChange(
  before: Pick<ApiRecord, 'release'> | null,
  after: { active: boolean; release: string; public: boolean },
): ReleaseChange {
  if (before === null) return 'update';
  if (after.release < before.release) return 'rollback';
  if (!after.active) return 'disable';
  return after.public ? 'publish' : 'update';
}
