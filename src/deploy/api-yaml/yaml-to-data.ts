/**
 * Turns a parsed YAML document into plain data in one pass over its nodes, instead of the yaml
 * library's `toJS`, whose alias handling looks through the whole document for each alias (and its
 * duplicate-key check through the whole map for each key): both grow with the square of the file.
 * Here an anchor is a map lookup, a duplicate key a set lookup, and an alias costs what it names
 * only once: its size and depth are known when it is met, so an alias bomb is refused at the alias
 * that crosses the limit. The pass also indexes each map's keys, so that errors find their position
 * without searching.
 */
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Alias,
  type Document,
  type Node,
  type Pair,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import type { YamlLimits } from '../../shared/api-model/input-limits.js';
import type { NodeIndex, PathKey } from './yaml-positions.js';
import type { TagPlaces } from './yaml-tags.js';

export interface DataProblem {
  /** Character offset of the node at fault. */
  offset: number;
  /** Keys leading to it (for the entry label of the error). */
  path: PathKey[];
  message: string;
  /** A duplicate key leaves usable data; every other problem stops the conversion. */
  fatal: boolean;
}

export interface ConvertedYaml {
  data: unknown;
  index: NodeIndex;
  problems: DataProblem[];
}

/** Converts `doc` (already within `limits.maxDepth` levels, see yaml-shape.ts) to plain data. */
export function yamlToData(doc: Document, limits: YamlLimits, tags: TagPlaces | null = null): ConvertedYaml {
  const converter = new Converter(limits, tags);
  const data = converter.value(doc.contents, 0).value;
  return { data: converter.stopped ? null : data, index: converter.index, problems: converter.problems };
}

interface Converted {
  value: unknown;
  /** Levels of maps and lists in the value (0 for a scalar). */
  height: number;
}

interface AnchoredValue extends Converted {
  /** Nodes of the value, with what its own aliases name. */
  size: number;
}

const NOTHING: Converted = { value: null, height: 0 };

class Converter {
  readonly index = new PairIndex();
  readonly problems: DataProblem[] = [];
  stopped = false;
  private nodes = 0;
  private readonly path: PathKey[] = [];
  /** The node each anchor name stands for so far (a later `&name` replaces an earlier one, as in YAML). */
  private readonly anchors = new Map<string, Node>();
  /** Anchored nodes whose conversion is under way: an alias to one of them would be a cycle. */
  private readonly open = new Set<Node>();
  private readonly anchored = new Map<Node, AnchoredValue>();

  constructor(
    private readonly limits: YamlLimits,
    private readonly tags: TagPlaces | null,
  ) {}

  /** `level`: maps and lists around the node. */
  value(node: unknown, level: number): Converted {
    if (this.stopped) return NOTHING;
    if (isAlias(node)) return this.alias(node, level);
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return NOTHING;
    const before = this.nodes;
    if (!this.count(node, 1)) return NOTHING;
    if (!this.tagFits(node)) return NOTHING;
    const anchor = node.anchor;
    if (anchor !== undefined) {
      this.anchors.set(anchor, node);
      this.open.add(node);
    }
    const converted = isScalar(node)
      ? { value: plainScalar(node.value), height: 0 }
      : isMap(node)
        ? this.map(node, level)
        : this.list(node.items, level);
    if (anchor !== undefined) {
      this.open.delete(node);
      this.anchored.set(node, { ...converted, size: this.nodes - before });
    }
    return converted;
  }

  private map(map: YAMLMap, level: number): Converted {
    const out: Record<string, unknown> = {};
    const pairs = new Map<string, Pair<unknown, unknown>>();
    let height = 0;
    for (const pair of map.items) {
      if (this.stopped) break;
      const key = this.key(pair.key);
      if (key === null) break;
      if (pairs.has(key)) {
        this.problem(pair.key, [...this.path, key], 'Map keys must be unique', false);
      } else {
        pairs.set(key, pair);
      }
      this.path.push(key);
      const converted = this.value(pair.value, level + 1);
      this.path.pop();
      // defineProperty: a key named `__proto__` stays a key, not the object's prototype.
      Object.defineProperty(out, key, { value: converted.value, enumerable: true, writable: true, configurable: true });
      height = Math.max(height, converted.height);
    }
    this.index.add(map, pairs);
    return { value: out, height: height + 1 };
  }

  private list(items: readonly unknown[], level: number): Converted {
    const out: unknown[] = [];
    let height = 0;
    for (let i = 0; i < items.length && !this.stopped; i++) {
      this.path.push(i);
      const converted = this.value(items[i], level + 1);
      this.path.pop();
      out.push(converted.value);
      height = Math.max(height, converted.height);
    }
    return { value: out, height: height + 1 };
  }

  /** A map key as the property name it becomes; null (with a problem) when it is not a single value. */
  private key(node: unknown): string | null {
    if (node === null || node === undefined) return '';
    const target = isAlias(node) ? this.resolve(node) : node;
    if (target === null) return null;
    if (isScalar(target)) {
      if (!this.count(node, 1)) return null;
      if (target === node && !this.tagFits(target)) return null;
      const value = plainScalar(target.value);
      if (target === node && target.anchor !== undefined) {
        this.anchors.set(target.anchor, target);
        this.anchored.set(target, { value, height: 0, size: 1 });
      }
      return value === null ? '' : String(value);
    }
    this.problem(node, this.path, 'a map key must be a single value (a name or a number), not a map or a list', true);
    return null;
  }

  private alias(alias: Alias, level: number): Converted {
    const target = this.resolve(alias);
    if (target === null) return NOTHING;
    const named = this.anchored.get(target)!;
    if (level + named.height > this.limits.maxDepth) {
      this.problem(
        alias,
        this.path,
        `alias *${alias.source} nests maps and lists deeper than ${this.limits.maxDepth} levels: the limit is ${this.limits.maxDepth}`,
        true,
      );
      return NOTHING;
    }
    if (!this.count(alias, named.size)) return NOTHING;
    return named;
  }

  /** The anchored node an alias names, or null (with a problem). */
  private resolve(alias: Alias): Node | null {
    const target = this.anchors.get(alias.source);
    if (target === undefined) {
      this.problem(
        alias,
        this.path,
        `alias *${alias.source} names no anchor: &${alias.source} must come before it`,
        true,
      );
      return null;
    }
    if (this.open.has(target)) {
      this.problem(
        alias,
        this.path,
        `alias *${alias.source} is inside the value it names (&${alias.source}): it would never end`,
        true,
      );
      return null;
    }
    this.index.addAlias(alias, target);
    return target;
  }

  /**
   * False (with a problem) when the node carries a tag that is not one of the core schema's, or one
   * that does not fit the node: yaml resolves `!!timestamp`, `!!binary`, `!!set` and the like even
   * with the core schema (to a Date, a Buffer, a Set, none of them data of a JSON shape), and leaves
   * the text of `!!int abc` or `!custom x` as a string with only a warning.
   */
  private tagFits(node: Scalar | YAMLMap | YAMLSeq): boolean {
    const tag = node.tag;
    if (tag === undefined || tag === '!') return true;
    const kind = CORE_TAGS.get(tag);
    if (kind !== undefined && kind.fits(node)) return true;
    // Pointed at the tag as written (`!e!x` under a %TAG line), else at the value.
    const start = node.range?.[0] ?? 0;
    const written = this.tags?.before(start) ?? null;
    const shown = written?.source ?? shownTag(tag);
    const at = { range: [written?.offset ?? start, 0, 0] };
    const message =
      kind === undefined
        ? `YAML tag ${shown} is not allowed: only the core schema's tags are (${[...CORE_TAGS.keys()].map(shownTag).join(', ')})`
        : `YAML tag ${shown} does not fit ${kind.misfit(node)}: ${shownTag(tag)} is for ${kind.what}`;
    this.problem(at, this.path, message, true);
    return false;
  }

  /** Adds `nodes` to the count; false (with a problem) past the limit. */
  private count(at: unknown, nodes: number): boolean {
    this.nodes += nodes;
    if (this.nodes <= this.limits.maxNodes) return true;
    const what = isAlias(at) ? `alias *${at.source} expands the file to` : 'the file has';
    this.problem(
      at,
      this.path,
      `${what} more than ${this.limits.maxNodes} YAML nodes: the limit is ${this.limits.maxNodes}`,
      true,
    );
    return false;
  }

  private problem(node: unknown, path: readonly PathKey[], message: string, fatal: boolean): void {
    const range = (node as { range?: [number, number, number] } | null)?.range;
    this.problems.push({ offset: range?.[0] ?? 0, path: [...path], message, fatal });
    if (fatal) this.stopped = true;
  }
}

interface CoreTag {
  what: string;
  fits(node: Scalar | YAMLMap | YAMLSeq): boolean;
  misfit(node: Scalar | YAMLMap | YAMLSeq): string;
}

const CORE = 'tag:yaml.org,2002:';

function scalarTag(what: string, fits: (value: unknown) => boolean): CoreTag {
  return { what, fits: (node) => isScalar(node) && fits(node.value), misfit: describeNode };
}

/** The tags of YAML 1.2's core schema, each with the nodes it may stand on. */
const CORE_TAGS = new Map<string, CoreTag>([
  [`${CORE}str`, scalarTag('text', (v) => typeof v === 'string')],
  [`${CORE}int`, scalarTag('integers', (v) => typeof v === 'bigint' || Number.isInteger(v))],
  [`${CORE}float`, scalarTag('numbers', (v) => typeof v === 'number')],
  [`${CORE}bool`, scalarTag('true and false', (v) => typeof v === 'boolean')],
  [`${CORE}null`, scalarTag('null', (v) => v === null)],
  [`${CORE}map`, { what: 'maps', fits: (node) => isMap(node), misfit: describeNode }],
  [`${CORE}seq`, { what: 'lists', fits: (node) => isSeq(node), misfit: describeNode }],
]);

function describeNode(node: Scalar | YAMLMap | YAMLSeq): string {
  if (isMap(node)) return 'a map';
  if (isSeq(node)) return 'a list';
  return `the value ${JSON.stringify(String(node.source ?? node.value).slice(0, 40))}`;
}

/** A tag as it is written: `!!timestamp` for YAML's own, `!name` for a local one. */
function shownTag(tag: string): string {
  if (tag.startsWith(CORE)) return `!!${tag.slice(CORE.length)}`;
  return tag.startsWith('!') ? tag : `!<${tag}>`;
}

/** YAML integers beyond 2^53 come as bigint; data is JSON, so they become numbers, as yaml's toJS does. */
function plainScalar(value: unknown): unknown {
  return typeof value === 'bigint' ? Number(value) : value;
}

/** Each map's pairs by key, and the node each alias names. */
class PairIndex implements NodeIndex {
  private readonly pairs = new WeakMap<YAMLMap, Map<string, Pair<unknown, unknown>>>();
  private readonly aliases = new WeakMap<Alias, Node>();

  add(map: YAMLMap, pairs: Map<string, Pair<unknown, unknown>>): void {
    this.pairs.set(map, pairs);
  }

  addAlias(alias: Alias, target: Node): void {
    this.aliases.set(alias, target);
  }

  pairOf(map: YAMLMap, key: string): Pair<unknown, unknown> | undefined {
    return this.pairs.get(map)?.get(key);
  }

  aliasTarget(alias: Alias): Node | null {
    return this.aliases.get(alias) ?? null;
  }
}
