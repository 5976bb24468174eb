/**
 * Maps (SPEC §2): `Maps/<name>.json`, with `Maps/<env>/<name>.json` deep-merged over it
 * (objects merge recursively, arrays and scalars replace). Other sub-folders of Maps are ignored.
 * The files read are held to {@link MAPS_LIMITS}: their total size before reading, each one's
 * depth and keys per object before parsing.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { MAPS_LIMITS, type JsonLimits, type MapsLimits } from '../../shared/api-model/input-limits.js';
import { checkJsonShape } from '../../shared/api-model/json-shape.js';
import type { ConfigError } from '../../shared/api-model/types.js';
import { formatBytes } from '../../directives/views/limits.js';

export interface LoadedMaps {
  /** Merged content by map name. */
  maps: Record<string, unknown>;
  /** Every map name found, also those whose file is invalid (so aliases to them are not reported twice). */
  names: string[];
  errors: ConfigError[];
}

const ENV_NAME = /^[A-Za-z0-9_-]+$/;

/** Loads the Maps of the API folder `apiDir` for `env`. A folder without `Maps/` has no maps. */
export async function loadMaps(apiDir: string, env: string, limits: MapsLimits = MAPS_LIMITS): Promise<LoadedMaps> {
  const errors: ConfigError[] = [];
  const reader = { errors, limits, bytesLeft: limits.maxTotalBytes };
  const base = await readJsonFolder(join(apiDir, 'Maps'), 'Maps', reader);
  // An env that is not a plain folder name (`..`, `a/b`) never selects a folder.
  const overrides = ENV_NAME.test(env)
    ? await readJsonFolder(join(apiDir, 'Maps', env), `Maps/${env}`, reader)
    : new Map();

  const maps: Record<string, unknown> = {};
  const names = [...new Set([...base.keys(), ...overrides.keys()])].sort();
  for (const name of names) {
    const b = base.get(name);
    const o = overrides.get(name);
    if (b === INVALID || o === INVALID) continue;
    const value = b === undefined ? o : o === undefined ? b : deepMerge(b, o);
    define(maps, name, value);
  }
  return { maps, names, errors };
}

/**
 * `override` merged over `base`: when both are plain objects their keys merge recursively;
 * otherwise (arrays, scalars, null, differing types) the override replaces the base.
 */
export function deepMerge(base: unknown, override: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(override)) return override;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(base)) define(out, key, value);
  for (const [key, value] of Object.entries(override)) {
    define(out, key, Object.hasOwn(out, key) ? deepMerge(out[key], value) : value);
  }
  return out;
}

/**
 * Parses JSON text within `limits` (depth, keys per object); on failure, a ConfigError pointing at
 * the line and column of the problem.
 */
export function parseJson(
  text: string,
  file: string,
  limits: JsonLimits = MAPS_LIMITS,
): { ok: true; value: unknown } | { ok: false; error: ConfigError } {
  // A byte-order mark is not JSON; a space keeps every offset where it was.
  const source = text.startsWith('\uFEFF') ? ` ${text.slice(1)}` : text;
  const shape = checkJsonShape(source, limits);
  if (shape !== null) {
    const { line, column } = lineAndColumn(source, shape.offset);
    return { ok: false, error: { file, line, column, label: null, message: shape.message } };
  }
  try {
    return { ok: true, value: JSON.parse(source) };
  } catch (error) {
    const found = locateJsonError(source) ?? {
      offset: 0,
      message: error instanceof Error ? error.message : String(error),
    };
    const { line, column } = lineAndColumn(source, found.offset);
    return { ok: false, error: { file, line, column, label: null, message: `invalid JSON: ${found.message}` } };
  }
}

const INVALID = Symbol('invalid');

interface MapsReader {
  errors: ConfigError[];
  limits: MapsLimits;
  /** What is left of {@link MapsLimits.maxTotalBytes}; below 0 once a file crossed it. */
  bytesLeft: number;
}

/** Reads the `*.json` files directly in `folder`, by name; a missing folder is empty. */
async function readJsonFolder(folder: string, shown: string, reader: MapsReader): Promise<Map<string, unknown>> {
  const { errors, limits } = reader;
  const out = new Map<string, unknown>();
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch {
    return out;
  }
  const files = entries.filter((e) => e.isFile() && e.name.endsWith('.json') && e.name.length > '.json'.length);
  files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of files) {
    const name = entry.name.slice(0, -'.json'.length);
    const file = `${shown}/${entry.name}`;
    let text: string;
    try {
      if (reader.bytesLeft < 0) {
        out.set(name, INVALID); // the limit was crossed by an earlier file, which has the error
        continue;
      }
      reader.bytesLeft -= (await stat(join(folder, entry.name))).size;
      if (reader.bytesLeft < 0) {
        const max = formatBytes(limits.maxTotalBytes);
        errors.push({
          file,
          line: 1,
          column: 1,
          label: null,
          message: `with ${file}, the Maps files come to more than ${max}: the limit is ${max} of Maps per release`,
        });
        out.set(name, INVALID);
        continue;
      }
      text = await readFile(join(folder, entry.name), 'utf8');
    } catch (error) {
      errors.push({
        file,
        line: 1,
        column: 1,
        label: null,
        message: `cannot read ${file}: ${(error as Error).message}`,
      });
      out.set(name, INVALID);
      continue;
    }
    const parsed = parseJson(text, file, limits);
    if (parsed.ok) {
      out.set(name, parsed.value);
    } else {
      errors.push(parsed.error);
      out.set(name, INVALID);
    }
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Sets an own property, also for keys like `__proto__` that JSON may contain. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** Readable text for jsonc-parser's error codes. */
const JSON_ERRORS: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'invalid number',
  PropertyNameExpected: 'expected a property name in double quotes',
  ValueExpected: 'expected a value',
  ColonExpected: 'expected ":" after the property name',
  CommaExpected: 'expected ","',
  CloseBraceExpected: 'expected "," or "}"',
  CloseBracketExpected: 'expected "," or "]"',
  EndOfFileExpected: 'unexpected content after the end of the JSON value',
  InvalidCommentToken: 'comments are not allowed in JSON',
  UnexpectedEndOfComment: 'comments are not allowed in JSON',
  UnexpectedEndOfString: 'unterminated string',
  UnexpectedEndOfNumber: 'unterminated number',
  InvalidUnicode: 'invalid \\u escape',
  InvalidEscapeCharacter: 'invalid escape character',
  InvalidCharacter: 'invalid character in a string',
};

/**
 * Where JSON text goes wrong and why, from jsonc-parser in strict JSON mode (JSON.parse's own
 * messages do not always give a position). Only called after JSON.parse failed.
 */
export function locateJsonError(text: string): { offset: number; message: string } | null {
  const errors: ParseError[] = [];
  parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (first === undefined) return null;
  const code = printParseErrorCode(first.error);
  let message = JSON_ERRORS[code] ?? code;
  if (first.offset >= text.length) message = `unexpected end of file: ${message}`;
  else if (code === 'InvalidSymbol')
    message = `${message} ${JSON.stringify(text.slice(first.offset, first.offset + Math.max(1, first.length)))}`;
  return { offset: first.offset, message };
}
