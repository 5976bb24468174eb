import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTENT_TYPE, contentTypeFor } from '../../src/directives/static/content-types.js';

describe('contentTypeFor', () => {
  it.each([
    // The 18 extensions of Anvil's former table, with the same answers.
    ['site.css', 'text/css; charset=utf-8'],
    ['app.js', 'text/javascript; charset=utf-8'],
    ['app.mjs', 'text/javascript; charset=utf-8'],
    ['data.json', 'application/json; charset=utf-8'],
    ['app.js.map', 'application/json; charset=utf-8'],
    ['index.html', 'text/html; charset=utf-8'],
    ['index.htm', 'text/html; charset=utf-8'],
    ['notes.txt', 'text/plain; charset=utf-8'],
    ['logo.svg', 'image/svg+xml; charset=utf-8'],
    ['a.png', 'image/png'],
    ['a.jpg', 'image/jpeg'],
    ['a.jpeg', 'image/jpeg'],
    ['a.gif', 'image/gif'],
    ['a.webp', 'image/webp'],
    ['favicon.ico', 'image/x-icon'],
    ['f.woff', 'font/woff'],
    ['f.woff2', 'font/woff2'],
    ['doc.pdf', 'application/pdf'],
  ])('%s → %s', (name, type) => {
    expect(contentTypeFor(name)).toBe(type);
  });

  it.each([
    // Extensions the former table did not know (then application/octet-stream): mime-db's type.
    ['report.csv', 'text/csv; charset=utf-8'],
    ['README.md', 'text/markdown; charset=utf-8'],
    ['module.wasm', 'application/wasm'],
    ['photo.avif', 'image/avif'],
    ['clip.mp4', 'video/mp4'],
    ['feed.xml', 'application/xml'],
    ['site.webmanifest', 'application/manifest+json; charset=utf-8'],
    ['archive.tar.gz', 'application/gzip'],
  ])('%s → %s (mime-db)', (name, type) => {
    expect(contentTypeFor(name)).toBe(type);
  });

  it('ignores the case of the extension', () => {
    expect(contentTypeFor('INDEX.HTML')).toBe('text/html; charset=utf-8');
    expect(contentTypeFor('Logo.SVG')).toBe('image/svg+xml; charset=utf-8');
  });

  it.each(['file', 'file.unknownext', '.hidden', 'trailing.', 'a.__proto__', 'a.constructor', 'a.toString'])(
    'answers application/octet-stream for %j',
    (name) => {
      expect(contentTypeFor(name)).toBe(DEFAULT_CONTENT_TYPE);
      expect(DEFAULT_CONTENT_TYPE).toBe('application/octet-stream');
    },
  );

  it('takes `type` as a full media type as it is, or as an extension', () => {
    expect(contentTypeFor('data.bin', 'text/plain; charset=latin1')).toBe('text/plain; charset=latin1');
    expect(contentTypeFor('data.bin', '  application/json ')).toBe('application/json');
    expect(contentTypeFor('data.bin', 'css')).toBe('text/css; charset=utf-8');
    expect(contentTypeFor('data.bin', '.SVG')).toBe('image/svg+xml; charset=utf-8');
    expect(contentTypeFor('data.bin', 'ico')).toBe('image/x-icon');
    expect(contentTypeFor('data.bin', 'csv')).toBe('text/csv; charset=utf-8');
    // An extension is the whole `type`, never the part after its last dot.
    expect(contentTypeFor('data.bin', 'tar.gz')).toBe(DEFAULT_CONTENT_TYPE);
    expect(contentTypeFor('data.bin', 'x.html')).toBe(DEFAULT_CONTENT_TYPE);
    expect(contentTypeFor('data.bin', 'nope')).toBe(DEFAULT_CONTENT_TYPE);
    // An empty or blank `type` falls back to the file's extension.
    expect(contentTypeFor('page.html', '')).toBe('text/html; charset=utf-8');
    expect(contentTypeFor('page.html', '  ')).toBe('text/html; charset=utf-8');
    expect(contentTypeFor('page.html', null)).toBe('text/html; charset=utf-8');
  });
});
