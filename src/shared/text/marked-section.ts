/**
 * A generated part of a hand-written document lives between two marker lines (HTML comments, so
 * they do not show): `text` with what is between them replaced by `content`, or unchanged when a
 * marker is missing (the generated-files test then reports the document stale).
 */
export function withMarkedSection(text: string, start: string, end: string, content: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) return text;
  return `${text.slice(0, from + start.length)}\n${content}\n${text.slice(to)}`;
}
