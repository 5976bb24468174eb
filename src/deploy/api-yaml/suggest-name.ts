/** "Did you mean …?": the known name closest to a misspelt one. */

/** The closest candidate within edit distance 2 (case-insensitive), or null. */
export function suggestName(name: string, candidates: Iterable<string>): string | null {
  let best: string | null = null;
  let bestDistance = 3;
  const wanted = name.toLowerCase();
  for (const candidate of candidates) {
    // The distance is at least the difference in length: most candidates cost nothing.
    if (Math.abs(candidate.length - wanted.length) >= bestDistance) continue;
    const d = editDistance(wanted, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** The Levenshtein distance: how many one-character insertions, deletions or changes turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
