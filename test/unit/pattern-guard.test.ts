import { describe, expect, it } from 'vitest';
import { nestedRepetition } from '../../src/directives/models/pattern-guard.js';

describe('nestedRepetition (ReDoS guard of model schemas)', () => {
  it('refuses a repeated group that repeats something', () => {
    for (const pattern of [
      '^(a+)+$',
      '(\\w*\\s?)*',
      '((ab)+){2,}',
      '^([a-z0-9-]+\\.)+[a-z]{2,}$',
      '(?:x{2,3})*',
      '((a)*)+',
      '(a+?)+?',
      '(?<n>\\d+)+',
    ]) {
      expect(nestedRepetition(pattern), pattern).toMatch(/repeats a group that repeats itself/);
    }
  });

  it('accepts repetition that is not nested', () => {
    for (const pattern of [
      '^\\d{3}-\\d{4}$',
      '^(ab)+$',
      '^(a+)?b$',
      '^[a-z(]+\\)*$',
      '\\(a+\\)+',
      '^(a{1})+$',
      '[+*]+',
      '^(?:(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)$',
      '',
    ]) {
      expect(nestedRepetition(pattern), pattern).toBeNull();
    }
  });
});
