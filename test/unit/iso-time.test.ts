import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/shared/logs/iso-time.js';

describe('isoTime', () => {
  it('gives the ISO 8601 time of the millisecond asked for, again and after another', () => {
    const first = Date.UTC(2026, 10, 23, 9, 30, 0, 123);
    expect(isoTime(first)).toBe('2026-11-23T09:30:00.123Z');
    expect(isoTime(first)).toBe('2026-11-23T09:30:00.123Z');
    expect(isoTime(first + 1)).toBe('2026-11-23T09:30:00.124Z');
    expect(isoTime(first + 86_400_000)).toBe('2026-11-24T09:30:00.123Z');
  });
});
