import type { ApiRuntime } from '../../engine/context.js';
import { Errors } from '../../shared/errors.js';
import { isNestedDeeperThan } from '../../shared/http/json-depth.js';
import { hostDiskGate } from '../../shared/quotas/host-disk.js';
import { ApiFiles } from './api-files.js';

/** Largest file ReadFile and CachedFileGet read into memory. */
export const FILE_READ_MAX_BYTES = 10 * 1024 * 1024;

/** How a file's bytes become a value and back: `text` (UTF-8), `json`, or `base64` (binary files). */
export const FILE_FORMATS = ['text', 'json', 'base64'] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

/** The API's files, one per actor thread (its ledger connection is closed with the thread). */
export function apiFiles(api: ApiRuntime): ApiFiles {
  return api.resource(
    'files',
    () => new ApiFiles(api.dataDir, api.quotas.filesBytes, api.refusals, hostDiskGate(api), () => api.now()),
  );
}

/**
 * The bytes to write for `content`: a text as UTF-8 (or decoded from base64 with `format: base64`),
 * null as an empty file, anything else (a map, a list, a number, a boolean) as JSON.
 */
export function contentBytes(directive: string, content: unknown, format: FileFormat | undefined): Buffer {
  if (format === 'base64') {
    if (typeof content !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(content.replace(/\s+/g, ''))) {
      throw Errors.badParameter('content', directive, 'with format: base64, content must be base64 text');
    }
    return Buffer.from(content, 'base64');
  }
  if (content === null || content === undefined) return Buffer.alloc(0);
  if (typeof content === 'string' && format !== 'json') return Buffer.from(content, 'utf8');
  return Buffer.from(JSON.stringify(content), 'utf8');
}

/** The value of a file's bytes in `format`; JSON deeper than the API's `maxJsonDepth` is refused like a body. */
export function fileValue(
  directive: string,
  name: string,
  bytes: Buffer,
  format: FileFormat,
  maxJsonDepth: number,
): unknown {
  if (format === 'base64') return bytes.toString('base64');
  const text = bytes.toString('utf8');
  if (format === 'text') return text;
  if (isNestedDeeperThan(text, maxJsonDepth))
    throw Errors.fileNotJson(directive, JSON.stringify(name), `nested deeper than ${maxJsonDepth} levels`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw Errors.fileNotJson(directive, JSON.stringify(name), (error as Error).message);
  }
}
