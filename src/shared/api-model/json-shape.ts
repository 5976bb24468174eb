/**
 * Checks the depth and the keys per object of JSON text in one pass over its characters, before it
 * is parsed (Maps files here; request bodies through shared/http/json-depth.ts): what is built from a Maps file afterwards (merged, stored, handed to the API's threads)
 * is then known to be shallow enough for code that recurses. Invalid JSON passes here untouched;
 * the parser reports it.
 */
import type { JsonLimits } from './input-limits.js';

export interface JsonShapeProblem {
  offset: number;
  message: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;

/** The first limit `text` crosses, or null. */
export function checkJsonShape(text: string, limits: JsonLimits): JsonShapeProblem | null {
  // Keys counted so far in each open object; -1 for an open array.
  const open: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    switch (c) {
      case QUOTE:
        inString = true;
        break;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (open.length >= limits.maxDepth) {
          return {
            offset: i,
            message: `objects and arrays nested deeper than ${limits.maxDepth} levels: the limit is ${limits.maxDepth}`,
          };
        }
        open.push(c === OPEN_OBJECT ? 0 : -1);
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        open.pop();
        break;
      case COLON: {
        const top = open.length - 1;
        if (top < 0 || open[top]! < 0) break;
        open[top]! += 1;
        if (open[top]! > limits.maxKeysPerObject) {
          return {
            offset: i,
            message: `more than ${limits.maxKeysPerObject} keys in one object: the limit is ${limits.maxKeysPerObject} keys per object`,
          };
        }
        break;
      }
    }
  }
  return null;
}
