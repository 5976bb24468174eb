import { Errors } from '../shared/errors.js';
import { attachmentDisposition, contentTypeFor } from './static/content-types.js';
import { STATIC_MAX_BYTES, STATIC_STREAM_ABOVE_BYTES, staticRoot } from './static/roots.js';
import { readInside, safeSegments } from './static/safe-file.js';
import { formatBytes } from './views/limits.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Serves one file (SPEC §7).
 *
 * - Root: the release's `Assets/` folder, or with `storage: true` the `storage/` folder of the
 *   API's data dir (src/directives/static/roots.ts).
 * - `path`: a folder under the root, `/`-separated (`css`, `images/icons`); default the root.
 *   Usually a literal in api.yaml.
 * - `file`: one file name inside that folder, no `/` (`site.css`); usually an alias of a path
 *   parameter (`$.message.pathParam.file`, decoded: `%2e%2e` arrives as `..`).
 * - Anything that could leave the root — `..`, `.`, empty segments, absolute paths, backslashes,
 *   NUL, a link whose target is outside the root (checked on the real path and again on the
 *   opened file), a directory, a FIFO or device — answers `404 {"error":"Not Found"}` like a
 *   missing file, so nothing is revealed.
 * - `type`: a media type, or an extension (`css`); default: the file's extension. An extension's
 *   type is mime-db's with Anvil's few choices (src/directives/static/content-types.ts), else
 *   `application/octet-stream`. `x-content-type-options: nosniff` always.
 * - `attachment: true`: `content-disposition: attachment; filename="<file>"` (escaped).
 * - A file over 10 MiB: 500. The status stays as it is (200 by default). A file over 64 KiB is not
 *   read here: the router streams it to the client (shared/protocol/file-ref.ts), holding a chunk per
 *   connection; a directive that reads the body after this one gets the bytes.
 */
export default defineDirective({
  name: 'ServeStatic',
  // Only the storage folder is the API's own data; Assets/ comes with the release.
  localState: (params) => params.storage !== undefined && params.storage !== false,
  summary:
    "Serves a file from the release's Assets/ (or, with storage: true, the API's storage folder); 404 when missing.",
  example: { file: 'index.html' },
  failures: [
    { error: Errors.notFound, when: 'when the file is missing' },
    { error: Errors.staticTooLarge, when: 'when the file is larger than 10 MiB' },
  ],
  params: {
    type: 'object',
    properties: {
      file: { type: 'string', maxLength: 1024 },
      path: { type: 'string', maxLength: 1024 },
      type: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e][\\x20-\\x7e]*$' },
      storage: { type: 'boolean' },
      attachment: { type: 'boolean' },
    },
    required: ['file'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const folder = safeSegments(stripTrailingSlash(params.path ?? ''));
    const file = typeof params.file === 'string' && !params.file.includes('/') ? safeSegments(params.file) : null;
    if (folder === null || file === null || file.length !== 1) throw Errors.notFound();
    const name = file[0]!;
    const read = await readInside(
      staticRoot(ctx.api, params.storage === true),
      [...folder, name],
      STATIC_MAX_BYTES,
      STATIC_STREAM_ABOVE_BYTES,
    );
    if (read.kind === 'missing') throw Errors.notFound();
    if (read.kind === 'too-large') {
      throw Errors.staticTooLarge(name, formatBytes(STATIC_MAX_BYTES));
    }
    const message = ctx.message;
    if (message.isResponseHeader('content-encoding')) message.removeHeader('content-encoding');
    message.setHeader('content-type', contentTypeFor(name, params.type));
    message.setHeader('x-content-type-options', 'nosniff');
    if (params.attachment === true) message.setHeader('content-disposition', attachmentDisposition(name));
    if (read.kind === 'ref') message.setFileBody(read.file);
    else message.setBody(read.data);
  },
});

function stripTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
