import { createHash } from 'node:crypto';

/**
 * Rendezvous (highest-random-weight) hashing over instance ids: the owner an API should get among
 * `candidates`. Every instance computes the same answer from the same live set, and an instance
 * joining or leaving moves only the APIs that scored highest on it. Null with no candidate.
 */
export function rendezvousOwner(apiId: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestScore = -1n;
  for (const id of candidates) {
    const score = createHash('sha256').update(`${id}\n${apiId}`).digest().readBigUInt64BE(0);
    if (score > bestScore || (score === bestScore && best !== null && id < best)) {
      best = id;
      bestScore = score;
    }
  }
  return best;
}
