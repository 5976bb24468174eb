import { apiFiles } from './files/content.js';
import { NAME_AND_TARGET_PARAMS, fileSegments } from './files/names.js';
import { defineDirective } from '../engine/directive-types.js';

/** Memory `target` = the size in bytes of `name` in the API's `storage/` folder, or null when there is no such file. */
export default defineDirective({
  name: 'FileSize',
  localState: true,
  summary:
    "Stores the size in bytes of the file `name` of the API's storage folder in memory `target` (null when missing).",
  example: { name: 'report.pdf', target: 'reportSize' },
  memory: { writes: ['<target>'] },
  params: NAME_AND_TARGET_PARAMS,
  async run(ctx, params) {
    const found = await apiFiles(ctx.api).stat('FileSize', 'storage', fileSegments('FileSize', params.name));
    ctx.memory.set(params.target, found === null ? null : found.size);
  },
});
