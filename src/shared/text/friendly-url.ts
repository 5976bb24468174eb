/**
 * StringToFriendlyUrl's slug: the original's rules (trim, lower case, `&` → `and`, apostrophes
 * dropped, Latin accents folded, every other character a `-`, runs of `-` collapsed) without its
 * flaws (ORIGINAL.md flaw 25): no HTML entity is involved, so `"` and `<` leave no letters behind,
 * and leading and trailing `-` are trimmed.
 */

/** Letters Unicode's compatibility decomposition (NFKD) leaves whole; the original's spelling where it had one (ß → sz). */
const LETTERS: Readonly<Record<string, string>> = {
  æ: 'ae',
  œ: 'oe',
  ß: 'sz',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ł: 'l',
  ŀ: 'l',
  þ: 'th',
  ħ: 'h',
  ı: 'i',
  ŧ: 't',
  ŋ: 'n',
  ĸ: 'k',
  ſ: 's',
};

const FOLDED = new RegExp(`[${Object.keys(LETTERS).join('')}]`, 'gu');
const COMBINING_MARKS = /\p{M}+/gu;
const APOSTROPHES = /['’‘`´]/g;
const NOT_SLUG = /[^a-z0-9]+/g;
const EDGE_DASHES = /^-+|-+$/g;

/** `"Crème Brûlée & Co's"` → `creme-brulee-and-cos`; an empty string when nothing of [a-z0-9] is left. */
export function friendlyUrl(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .normalize('NFKD')
    .replace(COMBINING_MARKS, '')
    .replace(FOLDED, (letter) => LETTERS[letter] ?? '')
    .replace(/&/g, 'and')
    .replace(APOSTROPHES, '')
    .replace(NOT_SLUG, '-')
    .replace(EDGE_DASHES, '');
}
