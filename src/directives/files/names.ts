import { Errors } from '../../shared/errors.js';

/** Longest file name a directive accepts (the whole relative path). */
export const MAX_FILE_NAME_LENGTH = 1024;

/** Longest file or folder name of one segment (the file systems' limit). */
const MAX_SEGMENT_BYTES = 255;

/**
 * The `name` parameter of the file directives. Its rules are checked when the entry runs
 * (fileSegments), so that a name from a client (an alias) that breaks them is that client's 400,
 * not a 500 of the parameter check (which turns a missing value into "").
 */
export const FILE_NAME_SCHEMA = { type: 'string' } as const;

/** The parameters of a directive that reads something of file `name` into memory `target`. */
export const NAME_AND_TARGET_PARAMS = {
  type: 'object',
  properties: { name: FILE_NAME_SCHEMA, target: { type: 'string', minLength: 1 } },
  required: ['name', 'target'],
  additionalProperties: false,
} as const;

/**
 * The segments of a file name a directive was given (`reports/2024/may.json`), or a 400 naming the
 * directive and the reason. A name is a relative path inside the API's folder: `/`-separated, no
 * empty, `.` or `..` segment, no leading `/`, drive letter, backslash or NUL. Nothing is decoded:
 * `%2e%2e` is a file called `%2e%2e`.
 */
export function fileSegments(directive: string, name: unknown): string[] {
  const refuse = (why: string): never => {
    throw Errors.fileBadName(directive, JSON.stringify(String(name).slice(0, 200)), why);
  };
  if (typeof name !== 'string' || name === '') return refuse('it must be a non-empty text');
  if (name.length > MAX_FILE_NAME_LENGTH) return refuse(`it is longer than ${MAX_FILE_NAME_LENGTH} characters`);
  if (name.includes('\0')) return refuse('it holds a NUL byte');
  if (name.includes('\\')) return refuse('it holds a backslash (folders are separated by /)');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name))
    return refuse("it is an absolute path (names are relative to the API's folder)");
  const segments = name.split('/');
  for (const segment of segments) {
    if (segment === '..') return refuse('it climbs out of its folder with ".."');
    if (segment === '' || segment === '.') return refuse('it has an empty or "." segment');
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES)
      return refuse(`a part of it is longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
  return segments;
}
