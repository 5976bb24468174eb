/**
 * What a debug trace (EnableDebug) must not show: credentials in headers, parameters, memory and
 * bodies, by name, and the values found under those names wherever else they turn up. Strings are
 * cut and structures bounded, so one trace line stays small whatever a request holds.
 */

export const REDACTED = '[redacted]';

/** Headers that carry credentials whatever the API says. */
const SECRET_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'api-key',
  'x-api-key',
  'public-host-key',
  'x-auth-token',
  'x-csrf-token',
]);

/** Field names that say "secret" in any API (`password`, `accessToken`, `client_secret`, `apiKey`…). */
const SECRET_NAME =
  /pass(word|wd)?|secret|token|api[-_]?key|authori[sz]ation|cookie|credential|session|private[-_]?key/i;

/** A string longer than this is cut (the trace says how much was left out). */
export const MAX_STRING = 1024;
const MAX_DEPTH = 8;
const MAX_ITEMS = 50;
/** A value shorter than this is not hunted for in other strings (it would hide innocent text). */
const MIN_SECRET_LENGTH = 4;

export class Redactor {
  private readonly marked: ReadonlySet<string>;
  private readonly seen = new Set<string>();

  /** `marked`: more names (headers, parameters, memory keys, body fields) the API wants hidden. */
  constructor(marked: readonly string[]) {
    this.marked = new Set(marked.map((name) => name.toLowerCase()));
  }

  isSecret(name: string): boolean {
    const lower = name.toLowerCase();
    return SECRET_HEADERS.has(lower) || this.marked.has(lower) || SECRET_NAME.test(name);
  }

  /** Remembers a secret value so that it is hidden where it shows up under another name. */
  remember(value: unknown): void {
    if (typeof value === 'string' && value.length >= MIN_SECRET_LENGTH) this.seen.add(value);
    else if (typeof value === 'number') this.remember(String(value));
    else if (Array.isArray(value)) for (const item of value) this.remember(item);
    else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) this.remember(item);
  }

  /** A copy fit for the log: secret fields hidden (and `secretFields` too), strings cut, depth and width bounded. */
  value(value: unknown, secretFields: ReadonlySet<string> = new Set(), depth = 0): unknown {
    if (typeof value === 'string') return this.text(value);
    if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
    if (typeof value === 'bigint') return String(value);
    if (Buffer.isBuffer(value)) return `<${value.length} bytes>`;
    if (typeof value !== 'object') return `<${typeof value}>`;
    if (depth >= MAX_DEPTH) return '<nested too deep>';
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_ITEMS).map((item) => this.value(item, new Set(), depth + 1));
      if (value.length > MAX_ITEMS) items.push(`<${value.length - MAX_ITEMS} more>`);
      return items;
    }
    const out: Record<string, unknown> = {};
    const entries = Object.entries(value);
    for (const [key, item] of entries.slice(0, MAX_ITEMS)) {
      if (secretFields.has(key) || this.isSecret(key)) {
        this.remember(item);
        out[key] = REDACTED;
      } else {
        out[key] = this.value(item, new Set(), depth + 1);
      }
    }
    if (entries.length > MAX_ITEMS) out['<more>'] = entries.length - MAX_ITEMS;
    return out;
  }

  /** A header table with credentials hidden. */
  headers(table: Readonly<Record<string, string | string[]>>): Record<string, unknown> {
    return this.value(table) as Record<string, unknown>;
  }

  /** A body as text: JSON walked like any value, other text scrubbed and cut. */
  body(body: Buffer | string | null): unknown {
    if (body === null) return null;
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.length === 0) return '';
    if (text.length <= 64 * 1024 && (text[0] === '{' || text[0] === '[')) {
      try {
        return this.value(JSON.parse(text));
      } catch {
        // not JSON after all: shown as text
      }
    }
    return this.text(text);
  }

  /** A string with the secret values seen so far hidden, cut at MAX_STRING. */
  text(value: string): string {
    let text = value;
    for (const secret of this.seen) if (text.includes(secret)) text = text.split(secret).join(REDACTED);
    return text.length > MAX_STRING ? `${text.slice(0, MAX_STRING)}…(+${text.length - MAX_STRING} chars)` : text;
  }
}
