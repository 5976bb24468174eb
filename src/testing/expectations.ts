/**
 * What a case's `expect` checks in an answer: the status, each named header (its exact value, `{ matches: <regular expression> }`, or null: absent), and
 * the body — a JSON subset (every key the expectation names, with a subset of its value; lists of
 * the same length, item by item) or, when the expectation is a string, the body's exact text.
 */
import type { Expectation } from './test-file.js';
import type { AnsweredRequest } from './test-runtime.js';

/** One difference: where, what was expected, what came. */
export interface Mismatch {
  where: string;
  expected: string;
  actual: string;
}

export function compareAnswer(expect: Expectation, answer: AnsweredRequest): Mismatch[] {
  const found: Mismatch[] = [];
  if (expect.status !== undefined && expect.status !== answer.status)
    found.push({ where: 'status', expected: String(expect.status), actual: String(answer.status) });
  for (const [name, wanted] of Object.entries(expect.headers ?? {})) {
    const value = headerValue(answer.headers, name.toLowerCase());
    if (wanted === null ? value !== null : !headerMatches(wanted, value))
      found.push({
        where: `header ${name.toLowerCase()}`,
        expected:
          wanted === null
            ? '(absent)'
            : typeof wanted === 'string'
              ? JSON.stringify(wanted)
              : `a match of /${wanted.matches}/`,
        actual: value === null ? '(absent)' : JSON.stringify(value),
      });
  }
  if (expect.body === undefined) return found;
  const text = answer.body.toString('utf8');
  if (typeof expect.body === 'string') {
    if (text !== expect.body)
      found.push({ where: 'body', expected: JSON.stringify(expect.body), actual: JSON.stringify(text) });
    return found;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    found.push({ where: 'body', expected: 'JSON', actual: text.length === 0 ? '(empty)' : JSON.stringify(clip(text)) });
    return found;
  }
  subset(expect.body, body, 'body', found);
  return found;
}

/** A string is the exact value; `{ matches }` a regular expression (checked when the file was read) the value must match. */
function headerMatches(wanted: string | { matches: string }, value: string | null): boolean {
  if (value === null) return false;
  return typeof wanted === 'string' ? value === wanted : new RegExp(wanted.matches, 'u').test(value);
}

/** A header's values joined as HTTP joins them, or null when the answer has none. */
export function headerValue(headers: readonly string[], name: string): string | null {
  const values: string[] = [];
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.toLowerCase() === name) values.push(headers[i + 1]!);
  return values.length === 0 ? null : values.join(', ');
}

function subset(expected: unknown, actual: unknown, where: string, found: Mismatch[]): void {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return void found.push({ where, expected: 'a list', actual: shown(actual) });
    if (actual.length !== expected.length)
      found.push({ where: `${where} (length)`, expected: String(expected.length), actual: String(actual.length) });
    expected.forEach((item, i) => i < actual.length && subset(item, actual[i], `${where}[${i}]`, found));
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return void found.push({ where, expected: 'an object', actual: shown(actual) });
    for (const [key, value] of Object.entries(expected)) {
      const at = /^[A-Za-z_$][\w$]*$/.test(key) ? `${where}.${key}` : `${where}[${JSON.stringify(key)}]`;
      if (!Object.hasOwn(actual, key)) found.push({ where: at, expected: shown(value), actual: '(absent)' });
      else subset(value, (actual as Record<string, unknown>)[key], at, found);
    }
    return;
  }
  if (expected !== actual) found.push({ where, expected: shown(expected), actual: shown(actual) });
}

function shown(value: unknown): string {
  return value === undefined ? '(absent)' : clip(JSON.stringify(value));
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
