import { originalPositionFor, TraceMap } from '@jridgewell/trace-mapping';
import type { Locate } from './call-errors.js';

/** Positions in custom directives' compiled code, mapped back to the author's files by their source maps (each parsed on first use). */
export class DirectivePositions {
  private readonly parsed = new Map<string, TraceMap | null>();

  constructor(private readonly maps: Readonly<Record<string, string>>) {}

  readonly locate: Locate = (directive, line, column) => {
    const map = this.mapOf(directive);
    if (map === null) return null;
    // V8 counts columns from 1, source maps from 0.
    const original = originalPositionFor(map, { line, column: Math.max(0, column - 1) });
    if (original.source === null || original.line === null) return null;
    return `${original.source}:${original.line}:${original.column + 1}`;
  };

  private mapOf(directive: string): TraceMap | null {
    const known = this.parsed.get(directive);
    if (known !== undefined) return known;
    let map: TraceMap | null = null;
    if (Object.hasOwn(this.maps, directive)) {
      try {
        map = new TraceMap(this.maps[directive]!);
      } catch {
        map = null;
      }
    }
    this.parsed.set(directive, map);
    return map;
  }
}
