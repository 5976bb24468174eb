import { describe, expect, it } from 'vitest';
import { sqlTextCache } from '../../src/directives/database/sql-cache.js';

describe('sqlTextCache', () => {
  it('forgets the least recently used entry beyond maxEntries (get counts as a use)', () => {
    const cache = sqlTextCache<number>(2, 1000);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect([...cache.keys()].sort()).toEqual(['a', 'c']);
    expect(cache.size).toBe(2);
  });

  it('forgets the least recently used entries beyond maxChars of keys in all', () => {
    const cache = sqlTextCache<number>(100, 10);
    cache.set('aaaa', 1);
    cache.set('bbbb', 2);
    cache.set('cccc', 3); // 12 chars: 'aaaa' goes
    expect(cache.has('aaaa')).toBe(false);
    expect(cache.get('bbbb')).toBe(2);
    cache.set('dddddd', 4); // 14 chars: 'cccc' goes, 'bbbb' was used more recently
    expect([...cache.keys()].sort()).toEqual(['bbbb', 'dddddd']);
    expect(cache.calculatedSize).toBe(10);
  });

  it('keeps no key longer than maxChars, and drops the entry it replaces', () => {
    const cache = sqlTextCache<number>(100, 10);
    cache.set('short', 1);
    cache.set('x'.repeat(11), 2);
    expect(cache.has('x'.repeat(11))).toBe(false);
    expect(cache.get('short')).toBe(1);
    cache.set('0123456789', 3);
    expect(cache.has('0123456789')).toBe(true);
    expect(cache.has('short')).toBe(false);
  });

  it('takes an empty key without throwing', () => {
    const cache = sqlTextCache<number>(10, 10);
    cache.set('', 1);
    expect(cache.get('')).toBe(1);
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
