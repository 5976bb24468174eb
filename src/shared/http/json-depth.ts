import { checkJsonShape } from '../api-model/json-shape.js';

/** How deep a JSON request body may nest (`--max-json-depth`); `{"a": [1]}` is 2 levels. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/**
 * True when `text`, read as JSON, opens more than `limit` objects or arrays inside one another.
 * One pass over the text (the scan Maps files get, shared/api-model/json-shape.ts), before anything parses
 * it: what reads a parsed value (aliases, copies into a sandbox, JSON.stringify) recurses, so a
 * deep body must be refused before it becomes a value. Text that is not JSON is measured the same
 * way, harmlessly.
 */
export function isNestedDeeperThan(text: string, limit: number): boolean {
  // Going deeper than `limit` takes at least limit + 1 opening brackets.
  if (text.length <= limit) return false;
  return checkJsonShape(text, { maxDepth: limit, maxKeysPerObject: Infinity }) !== null;
}
