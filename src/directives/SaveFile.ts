import { Errors } from '../shared/errors.js';
import { apiFiles, contentBytes, FILE_FORMATS } from './files/content.js';
import { FILE_NAME_SCHEMA, fileSegments } from './files/names.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Writes (or replaces) `name` in the API's `storage/` folder, making its folders. `content`: a text
 * as UTF-8, a map or list as JSON, null as an empty file; `format: base64` decodes a text to bytes,
 * `format: json` writes a text as a JSON string. The write is atomic (a reader sees the old file or
 * the new one) and counted against the API's disk quota (507, nothing written).
 */
export default defineDirective({
  name: 'SaveFile',
  localState: true,
  summary: "Writes `content` to the file `name` in the API's storage folder (atomic, within its disk quota).",
  example: { name: '$.message.pathParam.name', content: '$.message.body', format: 'text' },
  failures: [{ error: Errors.quotaFilesBytes, when: "when the file would take the API's files over their disk quota" }],
  params: {
    type: 'object',
    properties: {
      name: FILE_NAME_SCHEMA,
      content: {},
      format: { enum: [...FILE_FORMATS] },
    },
    required: ['name'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const segments = fileSegments('SaveFile', params.name);
    await apiFiles(ctx.api).write(
      'SaveFile',
      'storage',
      segments,
      contentBytes('SaveFile', params.content, params.format),
    );
  },
});
