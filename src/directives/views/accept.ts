import { parse as parseMediaRange } from 'content-type';
import Negotiator from 'negotiator';

const JSON_TYPE = 'application/json';
const HTML_TYPE = 'text/html';
const XHTML_TYPE = 'application/xhtml+xml';
/** JSON first: when negotiator finds both candidates equally wanted by the same range (`*\/*`), the first wins. */
const CANDIDATES = [JSON_TYPE, HTML_TYPE];
/** Bounds on the work per header: characters read, and media ranges (empty ones count) taken from them. */
const MAX_HEADER_CHARS = 4096;
const MAX_RANGES = 64;

/**
 * Does an `accept` header prefer HTML over JSON? Each media type gets the quality of the most
 * specific range that matches it (`text/html` > `text/*` > `*\/*`, RFC 9110 §12.5.1). HTML wins
 * when its quality is above zero and either higher than JSON's, or equal and matched by a more
 * specific range. So a browser (`text/html,…,*\/*;q=0.8`) gets HTML, while `*\/*`, no header,
 * `application/json`, or `text/html, application/json` (a tie) get JSON: an API's default.
 * An `application/xhtml+xml` range counts as a `text/html` one.
 *
 * The parsing and the matching are negotiator's (the one Express and Koa use): q-values, the
 * most specific range per type, case, whitespace, quoted parameters. Where its rules differ from
 * the ones above, Anvil's are kept, by how the header is handed to it:
 * - A tie: negotiator breaks a tie of quality and specificity by the place of the ranges in the
 *   header (`text/html, application/json` would be HTML). Here HTML must come first with the
 *   ranges in one order and in the reverse order, so only a lead on quality or specificity
 *   counts. That order puts equal ranges side by side (it is sorted by media range): of equally
 *   good ranges for one type negotiator takes the last, so `application/json, text/html,
 *   application/json` would put HTML first both in the order sent and in its reverse.
 * - `application/xhtml+xml`: as a candidate of negotiator's it would also be matched by
 *   `application/*`, which does not ask for the `text/html` we send; so a range naming it exactly
 *   is renamed `text/html` (content-type splits the ranges, as negotiator itself does), and
 *   `application/*` counts for JSON only.
 * Where negotiator's reading is kept (Anvil's own parser read these otherwise; browsers send
 * none of them): a range with parameters other than q (`text/html;level=1`) matches only a type
 * with those parameters (RFC 9110), so neither plain `text/html` nor `application/json`; `q=`
 * (empty) is 1, a q above 1 is taken as given, a range with an unreadable q (`q=abc`) accepts
 * nothing, of two q parameters the first counts; `*\/html` matches `text/html` and `*\/json`
 * `application/json`.
 */
export function prefersHtml(accept: string | null | undefined): boolean {
  if (typeof accept !== 'string' || accept.trim() === '') return false;
  const ranges = mediaRanges(accept.slice(0, MAX_HEADER_CHARS));
  return htmlFirst(ranges) && htmlFirst(ranges.reverse());
}

/** Does negotiator rank `text/html` first among the candidates for these ranges? */
function htmlFirst(ranges: readonly string[]): boolean {
  return new Negotiator({ headers: { accept: ranges.join(', ') } }).mediaType(CANDIDATES) === HTML_TYPE;
}

/**
 * The header's media ranges as sent (at most {@link MAX_RANGES}), an exact `application/xhtml+xml`
 * renamed `text/html`, in the order of their media range (stable: equal ones keep their order).
 */
function mediaRanges(header: string): string[] {
  const ranges: { type: string; text: string }[] = [];
  let index = 0;
  while (index < header.length && ranges.length < MAX_RANGES) {
    // Stops at the comma that ends the range (one inside a quoted parameter value does not end it).
    const parsed = parseMediaRange(header, { comma: true, start: index });
    const text = header.slice(index, parsed.index);
    if (parsed.type === XHTML_TYPE)
      ranges.push({ type: HTML_TYPE, text: HTML_TYPE + text.trimStart().slice(XHTML_TYPE.length) });
    else ranges.push({ type: parsed.type, text });
    index = parsed.index + 1;
  }
  return ranges.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)).map((r) => r.text);
}
