/**
 * Checks the entry lists of api.yaml (SPEC §3, §5, §7) and builds their definitions: the route
 * keys of `endpoints`, each entry's directive and parameters, and the aliases in the parameters.
 */
import { findAliases, parseAlias } from '../../shared/api-model/aliases.js';
import { paramIssues } from './param-schema.js';
import { parseRouteKey, type ParsedRoute } from './route-path.js';
import type { ReleaseView, RunsDirective } from '../../engine/directive-types.js';
import type { EndpointDefinition, EntryDefinition, SourcePosition } from '../../shared/api-model/types.js';
import type { ValidateContext } from './validate-context.js';
import type { PathKey, PointAt } from './yaml-positions.js';

export const DEFAULT_GROUPS: readonly string[] = ['normal_flow'];

/** What the checks need from the validator: the API's names, and where to report a problem. */
export interface Checker {
  readonly ctx: ValidateContext;
  /** The release's maps for the directives' deploy-time checks; null when they are not known. */
  readonly release: ReleaseView | null;
  /** Records an error at `path` of the file. */
  at(path: readonly PathKey[], at: PointAt, message: string): void;
  /** The position of `path` in the file. */
  where(path: readonly PathKey[], at: PointAt): SourcePosition;
  /** The directive name closest to a misspelt one, or null. */
  suggestDirective(name: string): string | null;
}

/** Checks `endpoints`: each route key, then its entries; an endpoint whose route key is not valid is left out. */
export function checkEndpoints(value: unknown, c: Checker): EndpointDefinition[] {
  if (!isPlainObject(value)) return [];
  const out: EndpointDefinition[] = [];
  const shapes = new Map<string, { key: string; line: number }>();
  for (const [routeKey, entries] of Object.entries(value)) {
    const path: PathKey[] = ['endpoints', routeKey];
    const where = c.where(path, 'key');
    const route = checkRoute(routeKey, path, where.line, shapes, c);
    const list = checkEntries(entries, path, route, c);
    if (route !== null) out.push({ verb: route.verb, path: route.path, entries: list, where });
  }
  return out;
}

/**
 * Checks one route key: its form, and that no earlier route (in `shapes`, which it adds to) has the
 * same verb and path. Returns the parsed route, or null when the key is not valid.
 */
function checkRoute(
  routeKey: string,
  path: readonly PathKey[],
  line: number,
  shapes: Map<string, { key: string; line: number }>,
  c: Checker,
): ParsedRoute | null {
  const parsed = parseRouteKey(routeKey);
  if (!parsed.ok) {
    for (const message of parsed.errors) c.at(path, 'key', message);
    return null;
  }
  const first = shapes.get(parsed.route.shape);
  if (first !== undefined) {
    c.at(
      path,
      'key',
      `duplicate route: "${routeKey}" has the same verb and path as "${first.key}" (line ${first.line})`,
    );
  } else {
    shapes.set(parsed.route.shape, { key: routeKey, line });
  }
  return parsed.route;
}

/**
 * Checks one list of entries. `route`: the parsed route for endpoint entries (null when the
 * route key is invalid), undefined for `before`/`after`.
 */
export function checkEntries(
  value: unknown,
  base: PathKey[],
  route: ParsedRoute | null | undefined,
  c: Checker,
): EntryDefinition[] {
  if (!isPlainObject(value)) return [];
  const out: EntryDefinition[] = [];
  for (const [label, entry] of Object.entries(value)) {
    if (isPlainObject(entry)) out.push(checkEntry(label, entry, [...base, label], route, c));
  }
  return out;
}

/** Checks one entry's directive, parameters and aliases. */
function checkEntry(
  label: string,
  entry: Record<string, unknown>,
  path: PathKey[],
  route: ParsedRoute | null | undefined,
  c: Checker,
): EntryDefinition {
  const where = c.where(path, 'key');
  const params = paramsOf(entry);
  const directive = entry.directive;
  if (typeof directive === 'string' && directive !== '') checkDirective(directive, params, path, c);
  checkAliases(params, path, route, c);
  return { label, directive: typeof directive === 'string' ? directive : '', groups: groupsOf(entry), params, where };
}

/** Every field of an entry except `directive` and `groups`. */
function paramsOf(entry: Record<string, unknown>): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [field, v] of Object.entries(entry)) {
    // defineProperty: a field named `__proto__` stays a (reported) parameter, not a prototype.
    if (field !== 'directive' && field !== 'groups')
      Object.defineProperty(params, field, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return params;
}

/** The entry's groups, lower-cased and without repeats; {@link DEFAULT_GROUPS} when it names none (or not as a list of names). */
function groupsOf(entry: Record<string, unknown>): string[] {
  return Array.isArray(entry.groups) && entry.groups.length > 0 && entry.groups.every((g) => typeof g === 'string')
    ? [...new Set((entry.groups as string[]).map((g) => g.toLowerCase()))]
    : [...DEFAULT_GROUPS];
}

/** A built-in directive's parameters are checked against its schema; a custom one takes any; any other name is unknown. */
function checkDirective(name: string, params: Record<string, unknown>, path: PathKey[], c: Checker): void {
  const builtin = c.ctx.directives.get(name);
  if (builtin !== undefined) {
    const issues = paramIssues(name, builtin.params, params);
    for (const issue of issues) c.at([...path, ...issue.path], issue.at, issue.message);
    if (builtin.runs !== undefined) checkRunTarget(builtin.runs, params, path, c);
    if (issues.length > 0 || builtin.checkRelease === undefined || c.release === null) return;
    for (const issue of builtin.checkRelease(params, c.release)) c.at([...path, issue.param], 'value', issue.message);
    return;
  }
  if (c.ctx.customDirectives.has(name)) return; // custom directives take any parameters
  if (c.ctx.phpDirectives?.has(name) === true) {
    c.at([...path, 'directive'], 'value', `unknown directive "${name}": ${phpNotRun(name)}`);
    return;
  }
  const suggestion = c.suggestDirective(name);
  const message =
    suggestion !== null
      ? `unknown directive "${name}" (did you mean "${suggestion}"?)`
      : `unknown directive "${name}": it is not a built-in directive and there is no Directives/${name}.js or Directives/${name}.ts`;
  c.at([...path, 'directive'], 'value', message);
}

/**
 * A directive that runs another (ExecuteIf) with a literal name: that directive must exist, and the
 * parameters that are not the runner's own must fit its schema. A name from an alias is checked
 * when it runs.
 */
function checkRunTarget(runs: RunsDirective, params: Record<string, unknown>, path: PathKey[], c: Checker): void {
  const target = params[runs.nameParam];
  if (typeof target !== 'string' || target === '' || target.startsWith('$.')) return;
  const rest: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(params)) {
    if (!runs.ownParams.includes(field))
      Object.defineProperty(rest, field, { value, enumerable: true, writable: true, configurable: true });
  }
  const builtin = c.ctx.directives.get(target);
  if (builtin !== undefined) {
    for (const issue of paramIssues(target, builtin.params, rest))
      c.at([...path, ...issue.path], issue.at, issue.message);
    if (builtin.runs !== undefined) checkRunTarget(builtin.runs, rest, path, c);
    return;
  }
  if (c.ctx.customDirectives.has(target)) return;
  const suggestion = c.suggestDirective(target);
  c.at(
    [...path, runs.nameParam],
    'value',
    `unknown directive "${target}"${suggestion !== null ? ` (did you mean "${suggestion}"?)` : ''}`,
  );
}

/** Each alias in the parameters must be well formed, read a known map, and read a path parameter the route has. */
function checkAliases(
  params: Record<string, unknown>,
  path: PathKey[],
  route: ParsedRoute | null | undefined,
  c: Checker,
): void {
  for (const found of findAliases(params)) {
    const at = [...path, ...found.path];
    const parsed = parseAlias(found.text);
    if (!parsed.ok) {
      c.at(at, 'value', parsed.error);
      continue;
    }
    const ref = parsed.ref;
    if (ref.kind === 'map' && !c.ctx.mapNames.has(ref.name)) {
      c.at(at, 'value', `alias "${found.text}" reads unknown map "${ref.name}" (there is no Maps/${ref.name}.json)`);
    }
    if (ref.kind === 'pathParam' && route !== undefined && route !== null && !route.params.includes(ref.name)) {
      const has =
        route.params.length === 0
          ? 'has no path parameters'
          : `has only ${route.params.map((p) => `{${p}}`).join(', ')}`;
      c.at(
        at,
        'value',
        `alias "${found.text}" reads path parameter "${ref.name}", but the path "${route.path}" ${has}`,
      );
    }
  }
}

/** What a leftover PHP directive needs (docs/migrating.md). */
export function phpNotRun(name: string): string {
  return `Directives/${name}.php is PHP, which Anvil does not run: translate it to Directives/${name}.js or .ts (docs/migrating.md)`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
