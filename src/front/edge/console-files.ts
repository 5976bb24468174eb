import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { Errors } from '../../shared/errors.js';
import { sendFailure } from './http-response.js';

/** Where the console is served on the admin host. */
export const CONSOLE_PATH = '/anvil/console';

/**
 * The console's pages hold no data: every figure is fetched by the page with the management
 * headers. So they are served without credentials, under a policy that lets them load nothing but
 * this origin's files and talk to nothing but this origin, and run no inline script or style.
 */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** A file name the console may have: lower-case words, folders one level deep at most, a known extension. */
const SERVED_NAME = /^(?:[a-z0-9][a-z0-9_-]*\/)?[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

/**
 * The console's static files (HTML, CSS, ES modules) from one folder, as they are on disk: no build
 * step, nothing cached in the router (the pages are loaded once per visit; the console's traffic is
 * its JSON polls). `path` is the request's path, starting with CONSOLE_PATH.
 */
export class ConsoleFiles {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  async serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    // The pages' links are relative to the folder: /anvil/console → /anvil/console/.
    if (path === CONSOLE_PATH) {
      res.writeHead(308, { location: `${CONSOLE_PATH}/`, 'content-length': '0', ...CONSOLE_SECURITY_HEADERS });
      return void res.end();
    }
    const name = path === `${CONSOLE_PATH}/` ? 'index.html' : path.slice(CONSOLE_PATH.length + 1);
    const file = this.resolveFile(name);
    const body = file === null ? null : await readFile(file).catch(() => null);
    if (file === null || body === null)
      return sendFailure(res, Errors.consoleFileMissing(name.slice(0, 200)), CONSOLE_SECURITY_HEADERS);

    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    const headers = { ...CONSOLE_SECURITY_HEADERS, etag, 'cache-control': 'no-cache' };
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers);
      return void res.end();
    }
    res.writeHead(200, { ...headers, 'content-type': CONTENT_TYPES[extname(file)]!, 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /** The file a name stands for, or null: an unknown extension, a hidden file, or anything outside the folder. */
  private resolveFile(name: string): string | null {
    let decoded: string;
    try {
      decoded = decodeURIComponent(name);
    } catch {
      return null;
    }
    if (!SERVED_NAME.test(decoded) || decoded.includes('..') || CONTENT_TYPES[extname(decoded)] === undefined)
      return null;
    const file = join(this.root, decoded);
    return file.startsWith(this.root + sep) ? file : null;
  }
}
