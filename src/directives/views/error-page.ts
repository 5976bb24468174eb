import { STATUS_CODES } from 'node:http';
import { escapeHtml } from './html.js';

/** The plain page SetSmartError sends when the API has no `Assets/views/errors/<status>.liquid`. */
export function builtinErrorPage(status: number, message: string): string {
  const title = `${status} ${STATUS_CODES[status] ?? 'Error'}`;
  return (
    '<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(title)}</title></head>\n<body>\n<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>\n</body>\n</html>\n`
  );
}
