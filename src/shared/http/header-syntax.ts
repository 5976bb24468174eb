/**
 * The syntax of a header line (RFC 9110 §5.1, §5.5), as node:http enforces it when it writes a head:
 * a name is a token, a value is visible ASCII, spaces, tabs and obs-text (0x80–0xFF). Checked where
 * a directive sets a header, so the error names the directive instead of breaking the response.
 */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const INVALID_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/** What is wrong with this header, or null when node:http would write it as it is. */
export function headerProblem(name: string, value: string | readonly string[]): string | null {
  if (!TOKEN.test(name))
    return `the header name ${shown(name)} is not a token (letters, digits and !#$%&'*+-.^_\`|~ only)`;
  if (typeof value === 'string') return valueProblem(name, value);
  for (const item of value) {
    const problem = valueProblem(name, item);
    if (problem !== null) return problem;
  }
  return null;
}

function valueProblem(name: string, value: string): string | null {
  const at = value.search(INVALID_VALUE_CHAR);
  if (at < 0) return null;
  return `the value of header ${shown(name)} contains ${describe(value.charCodeAt(at))} at character ${at + 1}`;
}

function describe(code: number): string {
  if (code === 0x0d) return 'a carriage return (CR)';
  if (code === 0x0a) return 'a line feed (LF)';
  if (code === 0x00) return 'a NUL';
  return `the character U+${code.toString(16).toUpperCase().padStart(4, '0')}, which a header cannot carry`;
}

/** A name as an error message shows it: quoted, escaped, and cut short. */
function shown(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
}
