import type { ApiDefinition } from '../../shared/api-model/types.js';
import { builtinDirectives } from '../../directives/catalogue.js';

/**
 * True when a release reads or writes the API's own data on the instance's disk: a built-in
 * directive marked `localState` (the Database* directives, the stored files), or any custom
 * directive (its `state.db` cannot be seen from outside). A `database: postgres` API keeps none:
 * its data is in Postgres. In cluster mode such a release is placed on one owner instance.
 */
export function keepsLocalState(definition: ApiDefinition, customDirectives: readonly string[]): boolean {
  if (definition.database === 'postgres') return false;
  if (customDirectives.length > 0) return true;
  const keepsState = (directive: string, params: Readonly<Record<string, unknown>>, depth: number): boolean => {
    const builtin = builtinDirectives.get(directive);
    // Unknown here means custom (counted above) or a name only an alias gives: assume it does.
    if (builtin === undefined || depth > 4) return true;
    const flag = builtin.localState;
    if (typeof flag === 'function') return flag(params, (inner) => keepsState(inner, params, depth + 1));
    return flag === true;
  };
  const lists = [definition.before, definition.after, ...definition.endpoints.map((e) => e.entries)];
  return lists.some((entries) => entries.some((entry) => keepsState(entry.directive, entry.params, 0)));
}
