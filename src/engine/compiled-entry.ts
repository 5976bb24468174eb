import type { EntryDefinition } from '../shared/api-model/types.js';
import type { AnyDirectiveDefinition } from './directive-types.js';
import { checkParams } from './param-check.js';
import { compileValue, type ResolveScope } from './resolve.js';

/** One entry of a list, ready to run: its directive looked up and its parameters compiled. */
export interface CompiledEntry {
  readonly label: string;
  /** `before:<label>`, `endpoint:<label>` or `after:<label>`: unique in a list, stable across releases. */
  readonly key: string;
  readonly directiveName: string;
  readonly directive: AnyDirectiveDefinition;
  readonly groups: readonly string[];
  /** Parameters whose schema says `writeOnly` (a key, a password): never shown in a debug trace. */
  readonly secretParams: ReadonlySet<string>;
  params(scope: ResolveScope): Record<string, unknown>;
}

export type DirectiveLookup = (name: string) => AnyDirectiveDefinition | undefined;

export function compileEntry(
  entry: EntryDefinition,
  section: 'before' | 'endpoint' | 'after',
  lookup: DirectiveLookup,
): CompiledEntry {
  const directive = lookup(entry.directive);
  if (directive === undefined) throw new Error(`unknown directive "${entry.directive}" in entry "${entry.label}"`);
  const compiled = compileValue(entry.params);
  let params: (scope: ResolveScope) => Record<string, unknown>;
  if (compiled.isStatic) {
    const value = compiled.value as Record<string, unknown>;
    params = () => value;
  } else {
    // Values that came from aliases were not type-checked at deploy time: check them per request.
    const resolve = compiled.resolve;
    params = (scope) => {
      const value = resolve(scope) as Record<string, unknown>;
      checkParams(directive, value, entry.label);
      return value;
    };
  }
  return {
    label: entry.label,
    key: `${section}:${entry.label}`,
    directiveName: entry.directive,
    directive,
    groups: entry.groups,
    secretParams: new Set(
      Object.entries(directive.params.properties)
        .filter(([, schema]) => schema.writeOnly === true)
        .map(([name]) => name),
    ),
    params,
  };
}
