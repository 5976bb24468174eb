import type { FS } from 'liquidjs';
import { readInsideSync } from '../static/safe-file.js';
import { formatBytes, type ViewLimits } from './limits.js';
import { assetNameProblem, templateFile } from './names.js';

/** What `resolve` returns for a name that is not allowed: it exists nowhere. */
const REFUSED = '\0refused';

/**
 * A template file that cannot be used (too large): the message names it. Private to the views:
 * ViewSession.render turns it into ANVIL_ERR_VIEW; SetSmartError falls back to its built-in page.
 */
class TemplateFileError extends Error {}

/**
 * The file system liquidjs sees: only the files under one `Assets/views` folder, by relative name
 * (`page.liquid`, `fragments/header.liquid`). `{% include %}`, `{% render %}` and `{% layout %}`
 * names go through {@link assetNameProblem}: `../../../etc/passwd`, absolute paths and the like resolve
 * to nothing. Files are read once per thread through the safe reader (links must stay inside the
 * folder) and kept in memory up to the cache bounds: a release never changes.
 */
export class ViewFiles implements FS {
  readonly sep = '/';
  private readonly files = new Map<string, string | null>();
  private cachedBytes = 0;

  constructor(
    private readonly dir: string,
    private readonly limits: ViewLimits,
  ) {}

  /** The file name of a template name, or a name that exists nowhere when it is not allowed. */
  resolve(_dir: string, file: string, _ext: string): string {
    const name = String(file);
    return assetNameProblem(name) === null ? templateFile(name) : REFUSED;
  }

  containsSync(_root: string, file: string): boolean {
    return file !== REFUSED;
  }

  contains(root: string, file: string): Promise<boolean> {
    return Promise.resolve(this.containsSync(root, file));
  }

  existsSync(file: string): boolean {
    return this.load(file) !== null;
  }

  exists(file: string): Promise<boolean> {
    return new Promise((resolve) => resolve(this.existsSync(file)));
  }

  readFileSync(file: string): string {
    const content = this.load(file);
    if (content === null) throw Object.assign(new Error(`ENOENT: template "${file}" not found`), { code: 'ENOENT' });
    return content;
  }

  readFile(file: string): Promise<string> {
    return new Promise((resolve) => resolve(this.readFileSync(file)));
  }

  dirname(file: string): string {
    const at = file.lastIndexOf('/');
    return at < 0 ? '' : file.slice(0, at);
  }

  /** The content of a template file (`fragments/a.liquid`), or null when there is none. */
  load(file: string): string | null {
    if (file === REFUSED) return null;
    const known = this.files.get(file);
    if (known !== undefined) return known;
    const read = readInsideSync(this.dir, file.split('/'), this.limits.templateBytes);
    if (read.kind === 'too-large') {
      throw new TemplateFileError(`template "${file}" is larger than ${formatBytes(this.limits.templateBytes)}`);
    }
    const content = read.kind === 'ok' ? read.data.toString('utf8') : null;
    const size = content?.length ?? 0;
    if (this.files.size < this.limits.cachedFiles && this.cachedBytes + size <= this.limits.cachedFileBytes) {
      this.files.set(file, content);
      this.cachedBytes += size;
    }
    return content;
  }
}
