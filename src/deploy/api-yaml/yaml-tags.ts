/**
 * Where the tags of a YAML file are written. The document's nodes know their tag but not where it
 * stands (their range starts at the value), so an error about a tag finds it here: the last tag
 * token before the node's start is its own, since a node's properties come right before it.
 */
import type { CST } from 'yaml';

export interface WrittenTag {
  offset: number;
  source: string;
}

export interface TagPlaces {
  /** The tag written for the node starting at `nodeStart`, or null when none is found. */
  before(nodeStart: number): WrittenTag | null;
}

/** Collects the tag tokens of `tokens` (already within the depth limit: see yaml-shape.ts). */
export function tagPlaces(tokens: readonly CST.Token[]): TagPlaces {
  const tags: WrittenTag[] = [];
  const stack: unknown[] = [...tokens];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (Array.isArray(next)) {
      stack.push(...next);
    } else if (next !== null && typeof next === 'object') {
      const token = next as { type?: unknown; offset?: unknown; source?: unknown };
      if (token.type === 'tag' && typeof token.offset === 'number' && typeof token.source === 'string') {
        tags.push({ offset: token.offset, source: token.source });
        continue;
      }
      for (const value of Object.values(next)) if (value !== null && typeof value === 'object') stack.push(value);
    }
  }
  tags.sort((a, b) => a.offset - b.offset);
  return {
    before(nodeStart) {
      let low = 0;
      let high = tags.length;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if (tags[mid]!.offset < nodeStart) low = mid + 1;
        else high = mid;
      }
      return low > 0 ? tags[low - 1]! : null;
    },
  };
}
