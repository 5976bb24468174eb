import type { ApiFiles } from './instance.js';

/** An API of StaticNameGenerator, ServeCompiledStatic and CacheUrl, its site.css naming `version` (its colour). */
export function compiledApi(version: string): ApiFiles {
  return {
    'api.yaml': `key: compiled
endpoints:
  get /page:
    Css: { directive: StaticNameGenerator, staticBasePath: /compiled/static, type: css, files: [site.css, theme] }
    Js: { directive: StaticNameGenerator, staticBasePath: /compiled/static/, type: js, files: [vendor/lib.js, app] }
    Reply: { directive: ModifyMessage, body: { css: $.memory.cssStaticFile, js: $.memory.jsStaticFile } }
  get /static/css:
    Serve: { directive: ServeCompiledStatic, extension: css }
  get /static/js:
    Serve: { directive: ServeCompiledStatic, extension: js, type: application/javascript }
  get /cached:
    Ping: { directive: Ping }
    Cache: { directive: CacheUrl, expirationMinutes: 10 }
  get /cached-default:
    Ping: { directive: Ping }
    Cache: { directive: CacheUrl }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`,
    'Assets/css/site.css': `body { color: ${version}; }`,
    'Assets/css/theme.css': '.theme { margin: 0; }',
    'Assets/js/app.js': 'app();',
    'Assets/js/vendor/lib.js': 'lib();',
    'Assets/secret.txt': 'not under css/',
  };
}
