import { apiFiles, FILE_READ_MAX_BYTES, fileValue } from './files/content.js';
import { NAME_AND_TARGET_PARAMS, fileSegments } from './files/names.js';
import { defineDirective } from '../engine/directive-types.js';

/** Memory `target` = the value CachedFileSet kept under `name`, or null when there is none or it expired (it is then removed). */
export default defineDirective({
  name: 'CachedFileGet',
  summary:
    "Reads the value kept under `name` in the API's file cache into memory `target` (null when missing or expired).",
  example: { name: 'forecast.json', target: 'forecast' },
  memory: { writes: ['<target>'] },
  params: NAME_AND_TARGET_PARAMS,
  async run(ctx, params) {
    const segments = fileSegments('CachedFileGet', params.name);
    const files = apiFiles(ctx.api);
    const found = await files.stat('CachedFileGet', 'cache', segments);
    let value: unknown = null;
    if (found !== null && found.mtimeMs <= ctx.api.now()) files.remove('CachedFileGet', 'cache', segments);
    else if (found !== null) {
      const bytes = await files.read('CachedFileGet', 'cache', segments, FILE_READ_MAX_BYTES);
      if (bytes !== null) value = fileValue('CachedFileGet', params.name, bytes, 'json', ctx.api.maxJsonDepth);
    }
    ctx.memory.set(params.target, value);
  },
});
