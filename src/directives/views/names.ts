/**
 * The names a View takes (template, fragments, css and js files) and the names templates may
 * include: relative, `/`-separated, made of `[A-Za-z0-9_./-]`, starting with a letter, digit or `_`,
 * with no `..` anywhere and no empty or `.` segment. Nothing else can name a file under
 * `Assets/views`, so no name can leave it.
 */
export const ASSET_NAME_PATTERN = '^(?!.*\\.\\.)[A-Za-z0-9_][A-Za-z0-9_./-]*$';
const ASSET_NAME = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;
const MAX_NAME_LENGTH = 255;

/** Why `name` is not an acceptable asset name, or null when it is. */
export function assetNameProblem(name: unknown): string | null {
  if (typeof name !== 'string') return 'is not a string';
  if (name.length === 0) return 'is empty';
  if (name.length > MAX_NAME_LENGTH) return `is longer than ${MAX_NAME_LENGTH} characters`;
  if (!ASSET_NAME.test(name)) return 'may only contain A-Z a-z 0-9 _ . / - and must start with a letter, a digit or _';
  if (name.includes('..')) return 'must not contain ".."';
  if (name.split('/').some((segment) => segment === '' || segment === '.'))
    return 'must not contain an empty or "." segment';
  return null;
}

/** The file a template name designates, relative to `Assets/views`: `.liquid` is added unless present. */
export function templateFile(name: string): string {
  return name.endsWith('.liquid') ? name : `${name}.liquid`;
}
