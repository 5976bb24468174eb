/**
 * Structural limits on the files a deploy reads (tenant input), checked before the expensive work:
 * a hostile file is refused with its file, line and the limit it crossed, in time linear in its size.
 */

export interface YamlLimits {
  /** Maps and lists inside each other (the top-level map is level 1). */
  maxDepth: number;
  /** Keys of one map. */
  maxKeysPerMap: number;
  /** Values, keys, maps and lists of the file, and again for each alias, what it names. */
  maxNodes: number;
  /** Uses of an alias (`*name`) in the file: the yaml library's `maxAliasCount`, counted per file. */
  maxAliases: number;
}

export const YAML_LIMITS: Readonly<YamlLimits> = Object.freeze({
  maxDepth: 64,
  maxKeysPerMap: 10_000,
  maxNodes: 100_000,
  maxAliases: 100,
});

export interface JsonLimits {
  /** Objects and arrays inside each other. */
  maxDepth: number;
  /** Keys of one object. */
  maxKeysPerObject: number;
}

export interface MapsLimits extends JsonLimits {
  /** Bytes of the Maps files a release reads (`Maps/*.json` and `Maps/<env>/*.json`), together. */
  maxTotalBytes: number;
}

export const MAPS_LIMITS: Readonly<MapsLimits> = Object.freeze({
  maxDepth: 64,
  maxKeysPerObject: 10_000,
  maxTotalBytes: 4 * 1024 * 1024,
});

/** At most this many errors are listed for a refused deploy; the rest are counted in one line. */
export const MAX_LISTED_ERRORS = 100;
