import { MAX_COMPILED_FILES, STATIC_TYPE_PATTERN, compiledStaticUrl } from './static/compiled-static.js';
import { ASSET_NAME_PATTERN } from './views/names.js';
import { defineDirective } from '../engine/directive-types.js';

/**
 * Memory `<type>StaticFile` = `staticBasePath` + `<type>?r=<this release>&f=<files joined with
 * commas>`: the URL of ServeCompiledStatic that serves those files of `Assets/<type>/` of this very
 * release, joined in one answer (`cssStaticFile`, `jsStaticFile` for a View's template).
 */
export default defineDirective({
  name: 'StaticNameGenerator',
  summary:
    'Stores in memory `<type>StaticFile` the ServeCompiledStatic URL joining `files` of Assets/<type>/ of this release.',
  example: { type: 'css', files: ['reset.css', 'site.css'] },
  memory: { writes: ['<type>StaticFile'] },
  params: {
    type: 'object',
    properties: {
      staticBasePath: { type: 'string', maxLength: 2048, default: '/' },
      type: { type: 'string', pattern: STATIC_TYPE_PATTERN },
      files: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_COMPILED_FILES,
        items: { type: 'string', minLength: 1, maxLength: 255, pattern: ASSET_NAME_PATTERN },
      },
    },
    required: ['type', 'files'],
    additionalProperties: false,
  },
  run(ctx, params) {
    ctx.memory.set(
      `${params.type}StaticFile`,
      compiledStaticUrl(params.staticBasePath ?? '/', params.type, ctx.api.release, params.files),
    );
  },
});
