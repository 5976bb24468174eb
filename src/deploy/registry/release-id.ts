import { randomBytes } from 'node:crypto';

/**
 * Release ids: `r-YYYYMMDD-HHMMSSmmm-xxxx` (UTC time of creation, 4 random hex chars).
 *
 * Within one generator the timestamp part never repeats and never goes backwards: when the clock
 * gives a millisecond already used (or an earlier one, e.g. after an NTP step), the last timestamp
 * is bumped by 1 ms. So ids are unique and sort lexicographically in creation order; the random
 * suffix keeps ids made by different processes (router and CLI) apart.
 */
const RELEASE_ID = /^r-\d{8}-\d{9}-[0-9a-f]{4}$/;

export function isReleaseId(s: unknown): s is string {
  return typeof s === 'string' && RELEASE_ID.test(s);
}

export type ReleaseIdGenerator = (now?: Date) => string;

/** A generator with its own "last timestamp used"; `newReleaseId` is the process-wide one. */
export function createReleaseIdGenerator(): ReleaseIdGenerator {
  let last = Number.NEGATIVE_INFINITY;
  return (now = new Date()) => {
    let ms = now.getTime();
    if (!Number.isFinite(ms)) throw new Error('release id: invalid date');
    if (ms <= last) ms = last + 1;
    last = ms;
    return `r-${formatUtc(ms)}-${randomBytes(2).toString('hex')}`;
  };
}

export const newReleaseId: ReleaseIdGenerator = createReleaseIdGenerator();

function formatUtc(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, width = 2) => String(n).padStart(width, '0');
  return (
    `${p(d.getUTCFullYear(), 4)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-` +
    `${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}${p(d.getUTCMilliseconds(), 3)}`
  );
}
