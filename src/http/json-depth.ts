/** How deep a JSON request body may nest (`--max-json-depth`); `{"a": [1]}` is 2 levels. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/** The characters a one-pass JSON scan looks at (here and in config/json-shape.ts), as char codes. */
export const JSON_CHAR = { QUOTE: 0x22, BACKSLASH: 0x5c, OPEN_OBJECT: 0x7b, CLOSE_OBJECT: 0x7d, OPEN_ARRAY: 0x5b, CLOSE_ARRAY: 0x5d, COLON: 0x3a } as const;
const { QUOTE, BACKSLASH, OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY } = JSON_CHAR;

/**
 * True when `text`, read as JSON, opens more than `limit` objects or arrays inside one another.
 * One pass over the text counting brackets outside strings, before anything parses it: what reads
 * a parsed value (aliases, copies into a sandbox, JSON.stringify) recurses, so a deep body must be
 * refused before it becomes a value. Text that is not JSON is measured the same way, harmlessly.
 */
export function isNestedDeeperThan(text: string, limit: number): boolean {
  // Going deeper than `limit` takes at least limit + 1 opening brackets.
  if (text.length <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}
