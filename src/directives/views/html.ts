/**
 * HTML that is already rendered (a fragment, the result of `| escape`): the output escaping of a
 * View lets it through as it is. Anything else printed by `{{ … }}` is escaped. A filter that turns
 * it into a plain string (`| upcase`) makes it ordinary text again, escaped on output.
 */
export class SafeHtml {
  /** For `| size` and `.size`: the length of the HTML. */
  readonly length: number;
  constructor(readonly html: string) {
    this.length = html.length;
  }
  toString(): string {
    return this.html;
  }
  toJSON(): string {
    return this.html;
  }
}

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes `& < > " '` for HTML text and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);
}
