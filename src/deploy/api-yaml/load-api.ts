/**
 * Loads and validates an API folder (SPEC §2, §3, §5, §7): api.yaml, Maps and the names of the
 * custom directives. Every problem is collected (a deploy with errors is refused whole), each
 * with its file, line, column and entry label, sorted by position.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { builtinDirectives } from '../../directives/catalogue.js';
import type { DirectiveChecks, ReleaseView } from '../../engine/directive-types.js';
import { checkStructure, RESERVED_KEYS } from './api-schema.js';
import { checkEndpoints, checkEntries, isPlainObject, phpNotRun, type Checker } from './check-entries.js';
import { compileDirective } from './compile-directive.js';
import { findCustomDirectives } from './custom-directives.js';
import { loadMaps } from './maps.js';
import { API_YAML_MAX_BYTES, readApiYaml, tooLarge } from './read-api-yaml.js';
import type { ApiDefinition, ConfigError, ApiLimits, SourcePosition } from '../../shared/api-model/types.js';
import { YAML_LIMITS } from '../../shared/api-model/input-limits.js';
import type { ValidateContext } from './validate-context.js';
import { readYaml, type YamlReading } from './read-yaml.js';
import { suggestName } from './suggest-name.js';
import { offsetToPosition, positionOf, type LinePosition, type PathKey, type PointAt } from './yaml-positions.js';

/** Separates the list (or route) from the entry label in `ConfigError.label`. */
export const LABEL_SEPARATOR = ' › ';

export interface ValidateResult {
  /** Null whenever there is at least one error. */
  definition: ApiDefinition | null;
  errors: ConfigError[];
}

/** `warnings`: what does not stop a deploy but will not work as the author may think (a leftover Directives/*.php). */
export type LoadApiResult =
  | {
      ok: true;
      definition: ApiDefinition;
      maps: Record<string, unknown>;
      customDirectives: string[];
      directiveCode: Record<string, string>;
      directiveMaps: Record<string, string>;
      warnings: ConfigError[];
    }
  | { ok: false; errors: ConfigError[]; warnings: ConfigError[] };

/** Parses and checks the text of an api.yaml; returns the definition when there is no error. */
export function validateApiYaml(text: string, ctx: ValidateContext): ValidateResult {
  if (Buffer.byteLength(text, 'utf8') > API_YAML_MAX_BYTES) {
    return { definition: null, errors: [tooLarge(ctx.file)] };
  }
  return new Validator(text, ctx).run();
}

/**
 * Reads an API folder: `api.yaml`, `Maps/` (with `Maps/<env>/` merged over it) and the names of
 * `Directives/*.js|*.ts`, and validates the lot.
 */
export async function loadApiFolder(
  dir: string,
  env: string,
  directives: ReadonlyMap<string, DirectiveChecks> = builtinDirectives,
  instance: Pick<ValidateContext, 'postgres'> = {},
): Promise<LoadApiResult> {
  const errors: ConfigError[] = [];
  const text = await readApiYaml(dir, errors);
  const maps = await loadMaps(dir, env);
  errors.push(...maps.errors);
  const custom = await findCustomDirectives(dir, directives);
  errors.push(...custom.errors);
  const directiveCode: Record<string, string> = {};
  const directiveMaps: Record<string, string> = {};
  for (const [name, file] of custom.files) {
    const compiled = await compileDirective(file, await readFile(join(dir, file), 'utf8'));
    if (compiled.ok) {
      directiveCode[name] = compiled.code;
      directiveMaps[name] = compiled.map;
    } else errors.push(...compiled.errors);
  }

  let definition: ApiDefinition | null = null;
  if (text !== null) {
    const result = validateApiYaml(text, {
      file: 'api.yaml',
      mapNames: new Set(maps.names),
      customDirectives: new Set(custom.names),
      phpDirectives: new Set(custom.php),
      directives,
      maps: maps.maps,
      ...instance,
    });
    errors.push(...result.errors);
    definition = result.definition;
  }
  const warnings = custom.php.map((name): ConfigError => ({
    file: `Directives/${name}.php`,
    line: 1,
    column: 1,
    label: null,
    message: phpNotRun(name),
  }));
  if (errors.length > 0 || definition === null)
    return { ok: false, errors: sortConfigErrors(errors, 'api.yaml'), warnings };
  return {
    ok: true,
    definition,
    maps: maps.maps,
    customDirectives: custom.names,
    directiveCode,
    directiveMaps,
    warnings,
  };
}

/** Sorts by file (`first` before the others, then by name), then line, then column; stable otherwise. */
export function sortConfigErrors(errors: readonly ConfigError[], first = 'api.yaml'): ConfigError[] {
  const fileRank = (file: string) => (file === first ? 0 : 1);
  return [...errors].sort(
    (a, b) =>
      fileRank(a.file) - fileRank(b.file) ||
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
      a.line - b.line ||
      a.column - b.column,
  );
}

// --------------------------------------------------------------------------------------------

const MAX_SUGGESTIONS = 100;

/** Checks one api.yaml text: YAML syntax and limits, then structure, then the entry lists (check-entries.ts). */
class Validator implements Checker {
  private readonly errors: ConfigError[] = [];
  private readonly reading: YamlReading;
  private readonly suggestions = new Map<string, string | null>();
  readonly release: ReleaseView | null;

  constructor(
    text: string,
    readonly ctx: ValidateContext,
  ) {
    this.reading = readYaml(text, ctx.limits ?? YAML_LIMITS);
    this.release = ctx.maps === undefined ? null : releaseView(ctx.maps, ctx.mapNames);
  }

  run(): ValidateResult {
    const reading = this.reading;
    for (const problem of reading.problems) {
      const message = problem.duplicate
        ? `${describeDuplicate(problem.path)}: Map keys must be unique`
        : problem.message;
      this.error(offsetToPosition(reading.lineCounter, problem.offset), labelForPath(problem.path), message);
    }
    // Duplicate keys leave usable data; any other problem would only make noise below.
    if (!reading.ok) return this.result(null);
    const data = reading.data;

    for (const issue of checkStructure(data)) this.at(issue.path, issue.at, issue.message);
    if (!isPlainObject(data)) return this.result(null);

    if (data.database === 'postgres' && this.ctx.postgres === false) {
      this.at(
        ['database'],
        'value',
        "database: postgres needs the cluster's Postgres: start the instance with DATABASE_URL (or remove the line for the API's own SQLite file)",
      );
    }
    if (typeof data.key === 'string' && RESERVED_KEYS.has(data.key)) {
      this.at(
        ['key'],
        'value',
        `key "${data.key}" is reserved for the platform (the management API lives under /${data.key}); choose another key`,
      );
    }
    const before = checkEntries(data.before, ['before'], undefined, this);
    const endpoints = checkEndpoints(data.endpoints, this);
    const after = checkEntries(data.after, ['after'], undefined, this);

    if (this.errors.length > 0 || typeof data.key !== 'string') return this.result(null);
    const limits = isPlainObject(data.limits) ? (data.limits as Partial<ApiLimits>) : {};
    const compat = data.compat === 'hefesto' ? { compat: 'hefesto' as const } : {};
    const database = data.database === 'postgres' ? { database: 'postgres' as const } : {};
    return this.result({
      key: data.key,
      debug: data.debug === true,
      ...compat,
      ...database,
      limits,
      before,
      endpoints,
      after,
    });
  }

  where(path: readonly PathKey[], at: PointAt): SourcePosition {
    const { line, column } = this.position(path, at);
    return { file: this.ctx.file, line, column };
  }

  at(path: readonly PathKey[], at: PointAt, message: string): void {
    this.error(this.position(path, at), labelForPath(path), message);
  }

  suggestDirective(name: string): string | null {
    let suggestion = this.suggestions.get(name);
    if (suggestion === undefined) {
      // Each lookup compares with every directive name (custom ones included): past a hundred
      // different misspellings, a file gets no more suggestions, and its check stays linear.
      suggestion =
        this.suggestions.size < MAX_SUGGESTIONS
          ? suggestName(name, [...this.ctx.directives.keys(), ...this.ctx.customDirectives])
          : null;
      this.suggestions.set(name, suggestion);
    }
    return suggestion;
  }

  private position(path: readonly PathKey[], at: PointAt): LinePosition {
    const reading = this.reading;
    return reading.ok ? positionOf(reading.doc, reading.lineCounter, reading.index, path, at) : { line: 1, column: 1 };
  }

  private result(definition: ApiDefinition | null): ValidateResult {
    const errors = sortConfigErrors(dedupeErrors(this.errors), this.ctx.file);
    return { definition: errors.length > 0 ? null : definition, errors };
  }

  private error(position: LinePosition, label: string | null, message: string): void {
    this.errors.push({ file: this.ctx.file, line: position.line, column: position.column, label, message });
  }
}

function releaseView(maps: Readonly<Record<string, unknown>>, mapNames: ReadonlySet<string>): ReleaseView {
  const memos = new Map<string, unknown>();
  return {
    maps,
    mapNames,
    memo<T>(key: string, create: () => T): T {
      if (!memos.has(key)) memos.set(key, create());
      return memos.get(key) as T;
    },
  };
}

/** `before › Label`, `after › Label`, `<route key> › Label`, `<route key>`, or null. */
function labelForPath(path: readonly PathKey[]): string | null {
  const [top, first, second] = path;
  if ((top === 'before' || top === 'after') && first !== undefined) return `${top}${LABEL_SEPARATOR}${first}`;
  if (top === 'endpoints' && first !== undefined)
    return second === undefined ? String(first) : `${first}${LABEL_SEPARATOR}${second}`;
  return null;
}

function describeDuplicate(path: readonly PathKey[]): string {
  const name = String(path[path.length - 1] ?? '');
  const [top, first] = path;
  if (path.length <= 1) return `duplicate top-level field "${name}"`;
  if ((top === 'before' || top === 'after') && path.length === 2) return `duplicate label "${name}" in ${top}`;
  if (top === 'endpoints' && path.length === 2) return `duplicate route "${name}"`;
  if (top === 'endpoints' && path.length === 3) return `duplicate label "${name}" in "${String(first)}"`;
  return `duplicate field "${name}"`;
}

function dedupeErrors(errors: ConfigError[]): ConfigError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const id = `${e.line}:${e.column}:${e.label}:${e.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
