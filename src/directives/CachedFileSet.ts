import { apiFiles } from './files/content.js';
import { FILE_NAME_SCHEMA, fileSegments } from './files/names.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Keeps `content` (any value, stored as JSON) under `name` in the API's file cache (`cache/` of its
 * data dir, apart from its storage) for `expirationMinutes` (default 5). The entry's expiry is its
 * file's modification time; expired entries are removed when read and swept before a write would
 * pass the API's disk quota.
 */
export default defineDirective({
  name: 'CachedFileSet',
  summary: "Keeps `content` under `name` in the API's file cache for expirationMinutes (default 5).",
  example: { name: 'forecast.json', content: '$.memory.forecast', expirationMinutes: 30 },
  params: {
    type: 'object',
    properties: {
      name: FILE_NAME_SCHEMA,
      content: {},
      expirationMinutes: { type: 'number', exclusiveMinimum: 0, maximum: 525_600, default: 5 },
    },
    required: ['name'],
    additionalProperties: false,
  },
  async run(ctx, params) {
    const segments = fileSegments('CachedFileSet', params.name);
    const json = Buffer.from(JSON.stringify(params.content ?? null), 'utf8');
    const expiresAt = ctx.api.now() + Math.round((params.expirationMinutes ?? 5) * 60_000);
    await apiFiles(ctx.api).write('CachedFileSet', 'cache', segments, json, expiresAt);
  },
});
