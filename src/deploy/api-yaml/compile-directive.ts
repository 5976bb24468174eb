/**
 * Custom directives are compiled when the API is deployed: TypeScript is transpiled, syntax errors
 * are reported with their file, line and column, and the module becomes one script that defines
 * `__anvilDirective` (its exports) when run in an isolate. Imports are refused: a directive is one
 * self-contained file, and the sandbox offers no modules.
 */
import { build, type Message } from 'esbuild';
import { DIRECTIVE_GLOBAL, type ConfigError } from '../../shared/api-model/types.js';

/** A directive's source larger than this is refused (it is tenant input). */
export const DIRECTIVE_MAX_BYTES = 512 * 1024;

/** `map`: the source map of `code` back to the author's file (no sources' content), for error positions. */
export type CompiledDirective = { ok: true; code: string; map: string } | { ok: false; errors: ConfigError[] };

export async function compileDirective(file: string, source: string): Promise<CompiledDirective> {
  if (Buffer.byteLength(source) > DIRECTIVE_MAX_BYTES) {
    return {
      ok: false,
      errors: [
        { file, line: 1, column: 1, label: null, message: `${file} is larger than ${DIRECTIVE_MAX_BYTES} bytes` },
      ],
    };
  }
  try {
    const result = await build({
      stdin: { contents: source, loader: file.endsWith('.ts') ? 'ts' : 'js', sourcefile: file },
      bundle: true,
      write: false,
      format: 'iife',
      globalName: DIRECTIVE_GLOBAL,
      platform: 'neutral',
      target: 'es2022',
      // An ES module is strict code; the script it becomes must be too.
      banner: { js: '"use strict";' },
      logLevel: 'silent',
      sourcemap: 'external',
      sourcesContent: false,
      outfile: 'directive.js',
      plugins: [
        {
          name: 'no-imports',
          setup(builder) {
            builder.onResolve({ filter: /.*/ }, (args) => ({
              errors: [
                {
                  text: `imports are not available in directives ("${args.path}"): a directive is one self-contained file`,
                },
              ],
            }));
          },
        },
      ],
    });
    const code = result.outputFiles.find((f) => f.path.endsWith('.js'))!.text;
    const map = result.outputFiles.find((f) => f.path.endsWith('.map'))!.text;
    // The code's own comment pointing at the map file goes: the map travels in the release.
    return { ok: true, code: code.replace(/\n\/\/# sourceMappingURL=\S+\n?$/, '\n'), map };
  } catch (error) {
    const messages = (error as { errors?: Message[] }).errors;
    if (!Array.isArray(messages) || messages.length === 0) throw error;
    return {
      ok: false,
      errors: messages.map((m) => ({
        file,
        line: m.location?.line ?? 1,
        // esbuild's columns count from 0.
        column: (m.location?.column ?? 0) + 1,
        label: null,
        message: m.text,
      })),
    };
  }
}
