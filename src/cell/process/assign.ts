import { createHash } from 'node:crypto';

/**
 * Rendezvous (highest-random-weight) hashing: an API goes to the cell with the highest score for
 * its identity, `formatApiId` (shared/protocol/api-id.ts): host, env and key, not the release, so
 * releases share a cell. Adding or removing a cell moves only the APIs that scored highest on
 * that cell.
 */
export function assignCell(identity: string, cells: number): number {
  let best = 0;
  let bestScore = -1;
  for (let cell = 0; cell < cells; cell++) {
    const score = createHash('sha1').update(`${identity}#${cell}`).digest().readUInt32BE(0);
    if (score > bestScore) {
      best = cell;
      bestScore = score;
    }
  }
  return best;
}
