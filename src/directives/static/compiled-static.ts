/**
 * The URL StaticNameGenerator makes and ServeCompiledStatic answers: `<staticBasePath>/<type>?r=<release>&f=<a>,<b>`,
 * naming files of the release's `Assets/<type>/` folder. Names are asset names (directives/views/names.ts:
 * `[A-Za-z0-9_./-]`, no `..`), so a comma never appears in one and nothing needs encoding.
 */

/** The folder (and extension) of a compiled static URL: `css`, `js`. */
export const STATIC_TYPE_PATTERN = '^[a-z0-9]{1,16}$';

/** Most files one URL may join. */
export const MAX_COMPILED_FILES = 100;

export function compiledStaticUrl(
  staticBasePath: string,
  type: string,
  release: string,
  files: readonly string[],
): string {
  const base = staticBasePath.endsWith('/') ? staticBasePath : `${staticBasePath}/`;
  return `${base}${type}?r=${encodeURIComponent(release)}&f=${files.join(',')}`;
}

/** The file a listed name designates in `Assets/<extension>/`: `.<extension>` is added unless present. */
export function compiledFileName(name: string, extension: string): string {
  return name.endsWith(`.${extension}`) ? name : `${name}.${extension}`;
}
