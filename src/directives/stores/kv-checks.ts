import { Errors } from '../../shared/errors.js';
import type { KvQuota } from '../../engine/kv-store.js';

/** Limits of the key-value store, the same for every backend. Sizes are UTF-8 bytes. */
export const KV_LIMITS = {
  maxKeyBytes: 1024,
  maxNamespaceBytes: 1024,
  maxValueBytes: 5 * 1024 * 1024,
} as const;

/** Lone UTF-16 surrogates: they have no UTF-8 form, so two different strings would share one stored key. */
const LONE_SURROGATE = /\p{Cs}/u;

function checkText(what: string, text: unknown): asserts text is string {
  if (typeof text !== 'string') throw Errors.kvBadArgument(`${what} must be a string, got ${typeof text}`);
  if (LONE_SURROGATE.test(text))
    throw Errors.kvBadArgument(`${what} is not well-formed Unicode (it holds a lone surrogate)`);
}

export function checkNamespace(ns: unknown): asserts ns is string {
  checkText('the namespace', ns);
  const bytes = Buffer.byteLength(ns);
  if (bytes > KV_LIMITS.maxNamespaceBytes)
    throw Errors.kvBadArgument(`the namespace is ${bytes} bytes, the limit is ${KV_LIMITS.maxNamespaceBytes} bytes`);
}

export function checkKey(key: unknown): asserts key is string {
  checkText('the key', key);
  const bytes = Buffer.byteLength(key);
  if (bytes > KV_LIMITS.maxKeyBytes) throw Errors.kvKeyTooLong(bytes, KV_LIMITS.maxKeyBytes);
}

export function checkValue(value: unknown): asserts value is string {
  checkText('the value', value);
  // A UTF-8 byte is at most 3 per UTF-16 unit, at least 1: skip the count when the answer is sure.
  if (value.length * 3 <= KV_LIMITS.maxValueBytes) return;
  const bytes = Buffer.byteLength(value);
  if (bytes > KV_LIMITS.maxValueBytes) throw Errors.kvValueTooLarge(bytes, KV_LIMITS.maxValueBytes);
}

/** A ttl in whole milliseconds (rounded up), or undefined for "no expiry". */
export function checkTtl(ttlMs: unknown, required: boolean): number | undefined {
  if (ttlMs === undefined && !required) return undefined;
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw Errors.kvBadArgument(`ttlMs must be a finite number of milliseconds > 0, got ${String(ttlMs)}`);
  }
  const whole = Math.ceil(ttlMs);
  if (!Number.isSafeInteger(whole)) throw Errors.kvBadArgument(`ttlMs is too large: ${ttlMs}`);
  return whole;
}

export function checkIncrement(by: unknown): asserts by is number {
  if (typeof by !== 'number' || !Number.isSafeInteger(by)) {
    throw Errors.kvBadArgument(`increment "by" must be a safe integer, got ${String(by)}`);
  }
}

export function checkQuota(quota: KvQuota | undefined): void {
  if (quota === undefined) return;
  if (quota === null || typeof quota !== 'object' || !Number.isSafeInteger(quota.maxBytes) || quota.maxBytes < 1) {
    throw Errors.kvBadArgument(`the quota must be { maxBytes: an integer >= 1 }, got ${JSON.stringify(quota)}`);
  }
}

export function checkWindow(window: unknown): void {
  const { endsAt, spanMs } = (window ?? {}) as Record<string, unknown>;
  if (
    !Number.isSafeInteger(endsAt) ||
    (endsAt as number) < 0 ||
    !Number.isSafeInteger(spanMs) ||
    (spanMs as number) < 1
  ) {
    throw Errors.kvBadArgument(
      `the window must be { endsAt: epoch ms, spanMs: an integer >= 1 }, got ${JSON.stringify(window)}`,
    );
  }
}
