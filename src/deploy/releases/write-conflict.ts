/**
 * The file system refused an entry because of an earlier one although our own bookkeeping saw no
 * conflict: names equal on a case-insensitive or normalising file system (macOS, Windows).
 */
export class Conflict extends Error {}

export const CONFLICT = 'conflicts with an earlier entry (names differing only in case or Unicode form?)';

const CONFLICT_CODES = new Set(['EEXIST', 'ENOTDIR', 'EISDIR', 'ELOOP']);

export function isConflict(err: unknown): boolean {
  return err instanceof Conflict || CONFLICT_CODES.has((err as NodeJS.ErrnoException | undefined)?.code ?? '');
}
