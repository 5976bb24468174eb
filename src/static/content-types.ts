import { extname } from 'node:path';

/** Content types ServeStatic knows by extension; anything else is `application/octet-stream`. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = Object.freeze({
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  json: 'application/json; charset=utf-8',
  map: 'application/json; charset=utf-8',
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  svg: 'image/svg+xml; charset=utf-8',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  pdf: 'application/pdf',
});

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/**
 * The content type to send: `type` when given — a full media type (`text/plain; charset=utf-8`)
 * as it is, or a bare extension (`css`, `.svg`) looked up in the table — else the file's extension.
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
  return (Object.hasOwn(CONTENT_TYPES, key) ? CONTENT_TYPES[key] : undefined) ?? DEFAULT_CONTENT_TYPE;
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
