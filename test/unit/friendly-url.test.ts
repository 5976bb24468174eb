import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { friendlyUrl } from '../../src/shared/text/friendly-url.js';

describe('friendlyUrl (StringToFriendlyUrl)', () => {
  it('keeps the original rules: lower case, & → and, apostrophes dropped, accents folded', () => {
    expect(friendlyUrl("Crème Brûlée & Co's")).toBe('creme-brulee-and-cos');
    expect(friendlyUrl('rock&roll')).toBe('rockandroll');
    expect(friendlyUrl('Ñandú Çà Va')).toBe('nandu-ca-va');
    expect(friendlyUrl('Hello   World')).toBe('hello-world');
    expect(friendlyUrl('Top 10 Tips')).toBe('top-10-tips');
  });

  it('folds the letters NFKD leaves whole with a table (ß as the original spelled it)', () => {
    expect(friendlyUrl('Ærøskøbing')).toBe('aeroskobing');
    expect(friendlyUrl('Straße')).toBe('strasze');
    expect(friendlyUrl('Łódź')).toBe('lodz');
    expect(friendlyUrl('Đặng Thị')).toBe('dang-thi');
    expect(friendlyUrl('Œuvre þing')).toBe('oeuvre-thing');
    expect(friendlyUrl('İstanbul')).toBe('istanbul');
    expect(friendlyUrl('ﬁve ①')).toBe('five-1');
  });

  it('leaves no entity letters behind (the original gave say-quot-hi-quot-)', () => {
    expect(friendlyUrl('say "hi"')).toBe('say-hi');
    expect(friendlyUrl('a<b>c')).toBe('a-b-c');
    expect(friendlyUrl('it’s')).toBe('its');
  });

  it('trims leading and trailing dashes (the original gave hi-)', () => {
    expect(friendlyUrl('Hi!')).toBe('hi');
    expect(friendlyUrl('  --x--  ')).toBe('x');
    expect(friendlyUrl('¡Hola!')).toBe('hola');
  });

  it('gives an empty slug when nothing of [a-z0-9] is left', () => {
    expect(friendlyUrl('Привет')).toBe('');
    expect(friendlyUrl('')).toBe('');
    expect(friendlyUrl('!!!')).toBe('');
  });

  it('always gives [a-z0-9] words joined by single dashes, and is idempotent', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (text) => {
        const slug = friendlyUrl(text);
        expect(slug).toMatch(/^(?:[a-z0-9]+(?:-[a-z0-9]+)*)?$/);
        expect(friendlyUrl(slug)).toBe(slug);
      }),
      { numRuns: 500 },
    );
  });
});
