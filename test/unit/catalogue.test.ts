import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AnvilError, Errors, QuotaError } from '../../src/shared/errors.js';
import { errorTable } from '../../src/shared/errors/error-table.js';

const OPERATE = new URL('../../docs/operate.md', import.meta.url);

describe('error catalogue', () => {
  it('fills a template with its arguments in order and keeps the entry status', () => {
    const error = Errors.kvKeyTooLong(300, 256);
    expect(error).toBeInstanceOf(AnvilError);
    expect(error.code).toBe('ANVIL_ERR_KV_KEY_TOO_LONG');
    expect(error.status).toBe(500);
    expect(error.message).toBe('key-value store: the key is 300 bytes, the limit is 256 bytes');
    expect(Errors.jsonTooDeep(64).logged).toBe(true);
  });

  it('takes the status from the caller where the API chooses it', () => {
    const error = Errors.thrown(418, 'teapot');
    expect([error.code, error.status, error.message]).toEqual(['ANVIL_ERR_THROWN', 418, 'teapot']);
  });

  it('makes quota errors that carry their quota name and retry-after', () => {
    const error = Errors.quotaQueuedJobs(10);
    expect(error).toBeInstanceOf(QuotaError);
    expect([error.status, error.quota, error.retryAfterSeconds]).toEqual([503, 'queued_jobs', 5]);
  });

  it('gives each code one fixed status', () => {
    const statuses = new Map<string, Set<number>>();
    for (const entry of Object.values(Errors)) {
      expect(entry.code).toMatch(/^ANVIL_ERR_[A-Z_]+$/);
      if (entry.status === 'caller') continue;
      statuses.set(entry.code, (statuses.get(entry.code) ?? new Set()).add(entry.status));
    }
    const mixed = [...statuses].filter(([, set]) => set.size > 1).map(([code]) => code);
    expect(mixed).toEqual([]);
  });

  it('is the table in docs/operate.md (regenerate with `npm run docs`)', () => {
    const text = readFileSync(OPERATE, 'utf8');
    const match = /<!-- error-table:start -->\n([\s\S]*?)\n<!-- error-table:end -->/.exec(text);
    expect(match, 'docs/operate.md has no error-table markers').not.toBeNull();
    expect(match![1]).toBe(errorTable());
  });
});
