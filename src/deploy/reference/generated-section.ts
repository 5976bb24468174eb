/** `text` (a page written by hand) with what stands between the markers `start` and `end` made anew; the text unchanged when a marker is missing. */
export function withSection(text: string, start: string, end: string, body: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) return text;
  return `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`;
}
