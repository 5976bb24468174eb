/**
 * Does an `accept` header prefer HTML over JSON? Each media type gets the quality of the most
 * specific range that matches it (`text/html` > `text/*` > `*\/*`, RFC 9110 §12.5.1). HTML wins
 * when its quality is above zero and either higher than JSON's, or equal and matched by a more
 * specific range. So a browser (`text/html,…,*\/*;q=0.8`) gets HTML, while `*\/*`, no header,
 * `application/json`, or `text/html, application/json` (a tie) get JSON: an API's default.
 */
export function prefersHtml(accept: string | null | undefined): boolean {
  if (typeof accept !== 'string' || accept.trim() === '') return false;
  const ranges = parseAccept(accept);
  const html = best(ranges, 'text', 'html', ['application/xhtml+xml']);
  const json = best(ranges, 'application', 'json', []);
  if (html.q <= 0) return false;
  if (html.q !== json.q) return html.q > json.q;
  return html.specificity > json.specificity;
}

interface Range {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(header: string): Range[] {
  const out: Range[] = [];
  for (const part of header.slice(0, 4096).split(',').slice(0, 64)) {
    const [mediaRange = '', ...params] = part.split(';');
    const [type = '', subtype = ''] = mediaRange.trim().toLowerCase().split('/');
    if (type === '' || subtype === '') continue;
    let q = 1;
    for (const param of params) {
      const [key = '', value = ''] = param.split('=');
      if (key.trim().toLowerCase() === 'q') {
        const n = Number(value.trim());
        q = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
      }
    }
    out.push({ type, subtype, q });
  }
  return out;
}

/** The quality of `type/subtype` (or of an equivalent full type): the most specific range decides. */
function best(ranges: Range[], type: string, subtype: string, equivalents: string[]): { q: number; specificity: number } {
  let result = { q: 0, specificity: -1 };
  for (const r of ranges) {
    let specificity = -1;
    if ((r.type === type && r.subtype === subtype) || equivalents.includes(`${r.type}/${r.subtype}`)) specificity = 2;
    else if (r.type === type && r.subtype === '*') specificity = 1;
    else if (r.type === '*' && r.subtype === '*') specificity = 0;
    if (specificity < 0) continue;
    if (specificity > result.specificity || (specificity === result.specificity && r.q > result.q)) result = { q: r.q, specificity };
  }
  return result;
}
