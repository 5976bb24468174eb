import { Errors } from '../shared/errors.js';
import { apiFiles, FILE_FORMATS, FILE_READ_MAX_BYTES, fileValue } from './files/content.js';
import { FILE_NAME_SCHEMA, fileSegments } from './files/names.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Reads `name` from the API's `storage/` folder into memory `target`: as text (`format: text`, the
 * default), parsed (`json`) or as base64 (`base64`, for binary files). A missing file is a 404
 * naming it; a file over 10 MiB a 500.
 */
export default defineDirective({
  name: 'ReadFile',
  localState: true,
  summary: "Reads the file `name` of the API's storage folder into memory `target` (text, json or base64).",
  example: { name: '$.message.pathParam.name', target: 'file', format: 'json' },
  memory: { writes: ['<target>'] },
  failures: [{ error: Errors.fileNotFound, when: 'when there is no such file' }],
  params: {
    type: 'object',
    properties: {
      name: FILE_NAME_SCHEMA,
      target: { type: 'string', minLength: 1 },
      format: { enum: [...FILE_FORMATS], default: 'text' },
    },
    required: ['name', 'target'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const segments = fileSegments('ReadFile', params.name);
    const bytes = await apiFiles(ctx.api).read('ReadFile', 'storage', segments, FILE_READ_MAX_BYTES);
    if (bytes === null) throw Errors.fileNotFound('ReadFile', JSON.stringify(params.name));
    ctx.memory.set(
      params.target,
      fileValue('ReadFile', params.name, bytes, params.format ?? 'text', ctx.api.maxJsonDepth),
    );
  },
});
