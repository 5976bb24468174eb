import { join } from 'node:path';
import { Errors } from '../shared/errors.js';
import { MAX_COMPILED_FILES, STATIC_TYPE_PATTERN, compiledFileName } from './static/compiled-static.js';
import { contentTypeFor } from './static/content-types.js';
import { STATIC_MAX_BYTES } from './static/roots.js';
import { readInside } from './static/safe-file.js';
import { assetNameProblem } from './views/names.js';
import { formatBytes } from './views/limits.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Answers a StaticNameGenerator URL: the files named by the query's `f` (comma-separated), read
 * from `Assets/<extension>/` of the release serving this request, joined with a newline between
 * them. The query's `r` must name that release: another release (or another API's) is a 404, as
 * is a missing file or a name that is not an asset name (`..`, `\`, absolute…). No `r` or `f`: 400.
 * Content type from `type`, else from the extension; `x-content-type-options: nosniff`; at most
 * 100 files and 10 MiB in all (500 above).
 */
export default defineDirective({
  name: 'ServeCompiledStatic',
  summary:
    "Serves the files of a StaticNameGenerator URL (?r=<release>&f=a,b) from this release's Assets/<extension>/, joined.",
  example: { extension: 'css' },
  failures: [
    { error: Errors.badRequest, when: 'when the query has no r (the release) or no f (the files)' },
    { error: Errors.notFound, when: 'when a file is missing, or the URL names another release' },
    { error: Errors.staticTooLarge, when: 'when the files joined are too large' },
  ],
  params: {
    type: 'object',
    properties: {
      extension: { type: 'string', pattern: STATIC_TYPE_PATTERN },
      type: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e][\\x20-\\x7e]*$' },
    },
    required: ['extension'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const { r: release, f: list } = ctx.message.query;
    if (typeof release !== 'string' || typeof list !== 'string' || release === '' || list === '') {
      throw Errors.badRequest('the query needs r (the release) and f (the files, comma-separated)');
    }
    const names = list.split(',');
    if (
      release !== ctx.api.release ||
      names.length > MAX_COMPILED_FILES ||
      names.some((name) => assetNameProblem(name) !== null)
    )
      throw Errors.notFound();

    const folder = join(ctx.api.releaseDir, 'Assets', params.extension);
    const parts: Buffer[] = [];
    let total = 0;
    for (const name of names) {
      const read = await readInside(
        folder,
        compiledFileName(name, params.extension).split('/'),
        STATIC_MAX_BYTES - total,
      );
      if (read.kind === 'missing') throw Errors.notFound();
      if (read.kind !== 'ok') throw Errors.staticTooLarge(list.slice(0, 200), formatBytes(STATIC_MAX_BYTES));
      if (parts.length > 0) parts.push(Buffer.from('\n'));
      parts.push(read.data);
      total += read.data.length + 1;
    }
    ctx.message.setHeader('content-type', contentTypeFor(`compiled.${params.extension}`, params.type));
    ctx.message.setHeader('x-content-type-options', 'nosniff');
    ctx.message.setBody(Buffer.concat(parts));
  },
});
