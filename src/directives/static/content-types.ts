import { createRequire } from 'node:module';
import { extname } from 'node:path';
import type mimeTypes from 'mime-types';

const require = createRequire(import.meta.url);
let mimeModule: typeof mimeTypes | null = null;
/** mime-db is loaded on first use: every spare actor thread would pay ~50 ms for it. */
const mime = (): typeof mimeTypes => (mimeModule ??= require('mime-types') as typeof mimeTypes);

/**
 * Anvil's own answers for a few extensions, ahead of mime-types (mime-db): SVG is text (XML) and is
 * declared UTF-8 like the text types, which mime-db gives no charset; a favicon keeps
 * `image/x-icon`, the type browsers have always taken for it, where mime-db prefers
 * `image/vnd.microsoft.icon`.
 */
const ANVIL_TYPES: Readonly<Record<string, string>> = Object.freeze({
  svg: 'image/svg+xml; charset=utf-8',
  ico: 'image/x-icon',
});

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/**
 * The content type to send: `type` when given — a full media type (`text/plain; charset=utf-8`)
 * as it is, or a bare extension (`css`, `.svg`) looked up — else the file's extension. An
 * extension's type is mime-db's (through mime-types), with `; charset=utf-8` on text types and the
 * JSON/JavaScript ones (mime-types' rule), except {@link ANVIL_TYPES}; an extension it does not
 * know, or none, is `application/octet-stream`.
 */
export function contentTypeFor(fileName: string, type?: string | null): string {
  if (typeof type === 'string' && type.trim() !== '') {
    const wanted = type.trim();
    if (wanted.includes('/')) return wanted;
    return byExtension(wanted.replace(/^\./, ''));
  }
  return byExtension(extname(fileName).slice(1));
}

function byExtension(extension: string): string {
  const key = extension.toLowerCase();
  if (Object.hasOwn(ANVIL_TYPES, key)) return ANVIL_TYPES[key]!;
  // The whole key, as before: `tar.gz` is unknown rather than mime-types' reading of its last part.
  const { types, contentType } = mime();
  const type = Object.hasOwn(types, key) ? types[key] : undefined;
  return (type !== undefined && contentType(type)) || DEFAULT_CONTENT_TYPE;
}

/**
 * `attachment; filename="…"` for a file name: `"` and `\` are backslash-escaped, control characters
 * dropped, and a name that is not plain ASCII gets an ASCII fallback (`_` for each other character)
 * plus RFC 8187's `filename*=UTF-8''…`.
 */
export function attachmentDisposition(fileName: string): string {
  const clean = [...fileName].filter((ch) => ch >= ' ' && ch !== '\x7f').join('');
  const ascii = clean.replace(/[^\x20-\x7e]/g, '_');
  const quoted = ascii.replace(/["\\]/g, (ch) => `\\${ch}`);
  let value = `attachment; filename="${quoted}"`;
  if (ascii !== clean) value += `; filename*=UTF-8''${encodeRfc8187(clean)}`;
  return value;
}

function encodeRfc8187(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}
