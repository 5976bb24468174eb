import { STATUS_CODES } from 'node:http';
import { Errors } from '../shared/errors.js';
import { apiFiles } from './files/content.js';
import { FILE_NAME_SCHEMA, fileSegments } from './files/names.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Deletes `name` from the API's `storage/` folder, and the folders that leaves empty (their disk
 * goes back to the quota). A missing file is ignored unless `verify` is true: then it fails with
 * `status` and `message` (as the original), or a 404 naming the file when no status is given. A
 * refused name (400), a link leading out (403) or a folder (409) always fail.
 */
export default defineDirective({
  name: 'DeleteFile',
  localState: true,
  summary:
    "Deletes the file `name` of the API's storage folder; with verify, a missing file fails with status/message.",
  example: { name: '$.message.pathParam.name', verify: true, status: 404 },
  failures: [
    { error: Errors.fileNotFound, when: 'when `verify` is true and there is no such file (without `status`)' },
    { error: Errors.thrown, when: 'the same, with `status` and `message` when they are given' },
  ],
  params: {
    type: 'object',
    properties: {
      name: FILE_NAME_SCHEMA,
      verify: { type: 'boolean' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      message: { type: 'string', maxLength: 1000 },
    },
    required: ['name'],
    additionalProperties: false,
  },
  run(ctx, params) {
    const segments = fileSegments('DeleteFile', params.name);
    if (apiFiles(ctx.api).remove('DeleteFile', 'storage', segments) || params.verify !== true) return;
    if (params.status === undefined) throw Errors.fileNotFound('DeleteFile', JSON.stringify(params.name));
    throw Errors.thrown(params.status, params.message ?? STATUS_CODES[params.status] ?? 'Error');
  },
});
