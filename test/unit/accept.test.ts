import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prefersHtml } from '../../src/directives/views/accept.js';

const CHROME =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';
const FIREFOX = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const SAFARI = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const OLD_IE = 'image/gif, image/jpeg, image/pjpeg, application/x-ms-application, application/xaml+xml, */*';

describe('prefersHtml: the cases of its comment', () => {
  it.each([CHROME, FIREFOX, SAFARI])('a browser gets HTML: %s', (accept) => {
    expect(prefersHtml(accept)).toBe(true);
  });

  it.each([
    ['*/*', '*/*'],
    ['no header', undefined],
    ['null', null],
    ['an empty header', ''],
    ['a blank header', '  \t '],
    ['application/json', 'application/json'],
    ['a tie', 'text/html, application/json'],
    ['a tie, the other way round', 'application/json, text/html'],
    ['a browser that only says */*', OLD_IE],
  ])('%s gets JSON', (_, accept) => {
    expect(prefersHtml(accept)).toBe(false);
  });

  it('counts application/xhtml+xml as HTML', () => {
    expect(prefersHtml('application/xhtml+xml')).toBe(true);
    expect(prefersHtml('application/xhtml+xml, application/json')).toBe(false); // a tie
    expect(prefersHtml('application/xhtml+xml;q=0.9, application/json;q=0.5')).toBe(true);
    expect(prefersHtml('text/html;q=0, application/xhtml+xml')).toBe(true); // the better of the two
  });
});

describe('prefersHtml: q-values', () => {
  it.each([
    ['text/html;q=0.9, application/json;q=0.8', true],
    ['application/json;q=0.9, text/html;q=0.8', false],
    ['text/html;q=0.5, application/json;q=0.5', false], // a tie
    ['text/html;q=0.500, application/json;q=0.5', false], // the same q written otherwise
    ['text/html;q=0.001', true],
    ['text/html;q=0', false],
    ['text/html;q=0.000, */*', false], // refused by name: the most specific range decides
    ['application/json;q=0, */*', true], // JSON refused, HTML accepted through */*
    ['text/html;q=0, application/json;q=0', false],
    ['text/html;Q=0.8, application/json;q=0.7', true], // the parameter name's case
    ['text/html ; q = 0.8 , application/json;q=0.7', true], // whitespace around ; and =
    ['application/json;q=0.5, text/html;q=0.4, application/json;q=0.3', false], // the better of two equal ranges
  ])('%s → HTML %s', (accept, html) => {
    expect(prefersHtml(accept)).toBe(html);
  });
});

describe('prefersHtml: wildcards and specificity', () => {
  it.each([
    ['text/*', true],
    ['application/*', false], // asks for application types, not for the text/html sent
    ['application/*, application/json;q=0.1', false],
    ['text/*, application/json', false], // equal q: the more specific range wins
    ['text/html, application/*', true],
    ['text/*, application/*', false], // a tie
    ['*/*;q=0.8, text/html', true],
    ['text/html;q=0.1, */*', false],
    ['text/*;q=0.9, */*', false], // JSON through */* at q=1
    ['TEXT/HTML', true],
    ['Application/JSON, text/html', false],
    // Ties whatever the order of the ranges, however the ranges repeat.
    ['application/json, text/html, application/json', false],
    ['text/html, application/json, text/html', false],
    ['text/*, application/*, text/*, application/*', false],
  ])('%s → HTML %s', (accept, html) => {
    expect(prefersHtml(accept)).toBe(html);
  });
});

describe('prefersHtml: malformed headers are JSON, without throwing', () => {
  it.each([
    'garbage',
    'text',
    'text/',
    '/html',
    ',,,',
    ';;;',
    '"',
    '=;=,=',
    'text/html;q=abc',
    'text/html;q=-1',
    'text/ html',
    '\u0000text/html',
  ])('%j', (accept) => {
    expect(prefersHtml(accept)).toBe(false);
  });

  it('never throws and always answers a boolean', () => {
    const piece = fc.constantFrom(
      ',',
      ';',
      '=',
      '"',
      '\\',
      '/',
      '*',
      ' ',
      '\t',
      'q',
      '0.5',
      'text',
      'html',
      'application',
      'json',
      'xhtml+xml',
      '__proto__',
      '\u00e9',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(piece, { maxLength: 40 }).map((p) => p.join('')),
          fc.string({ maxLength: 200 }),
        ),
        (accept) => {
          expect(typeof prefersHtml(accept)).toBe('boolean');
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("prefersHtml: negotiator's reading where Anvil's own parser read otherwise", () => {
  it('does not end a range at a comma inside a quoted parameter value', () => {
    expect(prefersHtml('application/json;q=0.5, x/y;a="b, text/html, c"')).toBe(false);
  });

  it('matches a range with parameters other than q only to a type with those parameters (RFC 9110)', () => {
    expect(prefersHtml('text/html;level=1')).toBe(false);
    expect(prefersHtml('text/html;level=1, text/html;q=0.9, application/json;q=0.8')).toBe(true);
  });

  it('takes a q above 1 as given, and an empty q as 1', () => {
    expect(prefersHtml('text/html;q=2, application/json')).toBe(true);
    expect(prefersHtml('text/html;q=, application/json;q=0.9')).toBe(true);
  });
});

describe('prefersHtml: very long headers', () => {
  it('reads the first 64 media ranges', () => {
    const others = (n: number) => Array.from({ length: n }, () => 'image/png').join(', ');
    expect(prefersHtml(`${others(63)}, text/html`)).toBe(true);
    expect(prefersHtml(`${others(64)}, text/html`)).toBe(false);
  });

  it('reads the first 4096 characters', () => {
    const padded = (n: number) => `image/png;p=${'a'.repeat(n)}, text/html`;
    expect(padded(4000).length).toBeLessThan(4096);
    expect(prefersHtml(padded(4000))).toBe(true);
    expect(prefersHtml(padded(5000))).toBe(false);
  });

  it('answers for headers far over any limit', () => {
    expect(prefersHtml(`text/html, ${'a'.repeat(200_000)}`)).toBe(true);
    expect(prefersHtml(`text/html;a="${'x,'.repeat(100_000)}`)).toBe(true); // an unterminated quote
    expect(prefersHtml(','.repeat(200_000))).toBe(false);
    expect(prefersHtml(`${'image/png;q=0.1, '.repeat(10_000)}text/html`)).toBe(false);
  });
});

/**
 * The rule of the comment, on ranges given as data (no parsing): each type's quality is that of
 * the most specific range that matches it (the higher q among equally specific ones); HTML wins
 * with a quality above zero and a lead on quality, or on specificity at equal quality.
 */
function expected(ranges: readonly { type: string; q: number }[]): boolean {
  const best = (specificity: (type: string) => number) => {
    let result = { q: 0, s: -1 };
    for (const r of ranges) {
      const s = specificity(r.type.toLowerCase());
      if (s > result.s || (s === result.s && s >= 0 && r.q > result.q)) result = { q: r.q, s };
    }
    return result;
  };
  const html = best((t) =>
    t === 'text/html' || t === 'application/xhtml+xml' ? 2 : t === 'text/*' ? 1 : t === '*/*' ? 0 : -1,
  );
  const json = best((t) => (t === 'application/json' ? 2 : t === 'application/*' ? 1 : t === '*/*' ? 0 : -1));
  if (html.q <= 0) return false;
  return html.q !== json.q ? html.q > json.q : html.s > json.s;
}

describe('prefersHtml: the rule of its comment, on generated headers', () => {
  const range = fc.record({
    type: fc.constantFrom(
      'text/html',
      'TEXT/Html',
      'application/json',
      'Application/JSON',
      'application/xhtml+xml',
      'text/*',
      'application/*',
      '*/*',
      'image/png',
      'text/plain',
    ),
    q: fc.oneof(
      fc.constant(1),
      fc.constantFrom(0, 0.5, 0.8),
      fc.integer({ min: 0, max: 1000 }).map((n) => n / 1000),
    ),
    written: fc.constantFrom('none', 'plain', 'spaced', 'padded'),
  });

  it('agrees with the rule, whatever the order of the ranges', () => {
    fc.assert(
      fc.property(fc.array(range, { maxLength: 8 }), (ranges) => {
        const header = ranges
          .map(({ type, q, written }) => {
            if (written === 'none' && q === 1) return type;
            if (written === 'spaced') return ` ${type} ; q = ${q}`;
            if (written === 'padded') return `${type};q=${q.toFixed(3)}`;
            return `${type};q=${q}`;
          })
          .join(',');
        expect(prefersHtml(header)).toBe(expected(ranges));
        expect(prefersHtml([...header.split(',')].reverse().join(','))).toBe(expected(ranges));
      }),
      { numRuns: 3000 },
    );
  });
});
