import type { ApiRecord } from './records.js';

/** What a `PUT /anvil/api/<key>` does to an API, for the metrics and the operator endpoints. */
export type ReleaseChange = 'publish' | 'disable' | 'rollback' | 'update';

/**
 * A PUT naming a release older than the current one is a rollback (release ids sort in creation
 * order); one that makes the API inactive a disable; one that makes it active (or changes
 * `public`) a publish; anything else (another newer release, nothing new) an update.
 */
export function releaseChange(before: Pick<ApiRecord, 'release' | 'active' | 'public'> | null, after: { active: boolean; release: string; public: boolean }): ReleaseChange {
  if (before === null) return 'update';
  if (after.release < before.release) return 'rollback';
  if (before.active && !after.active) return 'disable';
  if (after.active && (!before.active || before.public !== after.public)) return 'publish';
  return 'update';
}
