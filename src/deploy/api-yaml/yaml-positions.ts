/**
 * Maps a path of keys in a parsed YAML document to a 1-based line and column, so that every
 * configuration error can point at the most precise place of the file (and an offset back to a path).
 */
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Alias,
  type Document,
  type LineCounter,
  type Node,
  type Pair,
  type YAMLMap,
} from 'yaml';

export interface LinePosition {
  line: number;
  column: number;
}

export type PathKey = string | number;

/**
 * Lookups made while the document was read (yaml-to-data.ts), so that finding a path costs one
 * step per key instead of a search through each map and through the document for each alias.
 */
export interface NodeIndex {
  pairOf(map: YAMLMap, key: string): Pair<unknown, unknown> | undefined;
  aliasTarget(alias: Alias): Node | null;
}

/**
 * `key`: point at the map key that holds the value (for unknown fields, missing fields inside an
 * entry, labels); `value`: point at the value itself (wrong types, bad values).
 */
export type PointAt = 'key' | 'value';

/** Converts a JSON pointer (ajv's `instancePath`) to path keys: `/a/b~1c` → `['a', 'b/c']`. */
export function pointerToPath(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** 1-based line and column of a character offset. */
export function offsetToPosition(lineCounter: LineCounter, offset: number): LinePosition {
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/**
 * The position of the node at `path`; when the path does not exist (to its end), the position of
 * the nearest existing ancestor: the key that holds it, or the document's start.
 */
export function positionOf(
  doc: Document,
  lineCounter: LineCounter,
  index: NodeIndex,
  path: readonly PathKey[],
  at: PointAt = 'value',
): LinePosition {
  const found = locate(doc, index, path);
  const offset = pickOffset(found, found.complete ? at : 'key');
  return offset === null ? { line: 1, column: 1 } : offsetToPosition(lineCounter, offset);
}

interface Located {
  /** The map key holding the last node reached (none for the root and for list items). */
  key: Node | null;
  value: Node | null;
  /** True when every key of the path was found. */
  complete: boolean;
}

/** Walks the document along `path` as far as it exists. */
export function locate(doc: Document, index: NodeIndex, path: readonly PathKey[]): Located {
  let value = asNode(doc.contents);
  let key: Node | null = null;
  for (const step of path) {
    const node = value !== null && isAlias(value) ? asNode(index.aliasTarget(value)) : value;
    if (isMap(node)) {
      const pair = index.pairOf(node, String(step));
      if (pair === undefined) return { key, value: node, complete: false };
      key = asNode(pair.key);
      value = asNode(pair.value);
    } else if (isSeq(node)) {
      const index = typeof step === 'number' ? step : /^\d+$/.test(step) ? Number(step) : -1;
      const item = index >= 0 ? node.items[index] : undefined;
      if (item === undefined) return { key, value: node, complete: false };
      key = null;
      value = asNode(item);
    } else {
      return { key, value: node, complete: false };
    }
  }
  return { key, value, complete: true };
}

/** The keys leading to the innermost map pair or list item whose text contains `offset`. */
export function pathAtOffset(doc: Document, offset: number): PathKey[] {
  const path: PathKey[] = [];
  let node: unknown = doc.contents;
  for (;;) {
    if (isMap(node)) {
      const pair = node.items.find((p) => {
        const start = rangeOf(p.key)?.[0] ?? rangeOf(p.value)?.[0];
        const end = rangeOf(p.value)?.[2] ?? rangeOf(p.key)?.[2];
        return start !== undefined && end !== undefined && start <= offset && offset <= end;
      });
      if (pair === undefined) return path;
      const key = pair.key as { value?: unknown } | null;
      path.push(String(key !== null && typeof key === 'object' && 'value' in key ? key.value : key));
      const keyRange = rangeOf(pair.key);
      if (keyRange !== undefined && offset <= keyRange[2]) return path;
      node = pair.value;
    } else if (isSeq(node)) {
      const index = node.items.findIndex((item) => {
        const r = rangeOf(item);
        return r !== undefined && r[0] <= offset && offset <= r[2];
      });
      if (index < 0) return path;
      path.push(index);
      node = node.items[index];
    } else {
      return path;
    }
  }
}

function pickOffset(found: Located, at: PointAt): number | null {
  const keyStart = found.key?.range?.[0] ?? null;
  const valueStart = isEmptyValue(found.value) ? null : (found.value?.range?.[0] ?? null);
  if (at === 'key') return keyStart ?? valueStart;
  return valueStart ?? keyStart;
}

/** `label:` with nothing after it: yaml makes a null scalar of zero width, not worth pointing at. */
function isEmptyValue(node: Node | null): boolean {
  if (node === null) return true;
  return isScalar(node) && node.value === null && node.range != null && node.range[0] === node.range[1];
}

function asNode(value: unknown): Node | null {
  return value !== null && typeof value === 'object' && 'range' in value ? (value as Node) : null;
}

function rangeOf(node: unknown): [number, number, number] | undefined {
  return asNode(node)?.range ?? undefined;
}
