/**
 * A deploy-time guard against the classic ReDoS shape in a tenant's JSON Schema `pattern`: a
 * repeated group that itself repeats something (`(a+)+`, `(\w*\s?)*`, `((ab)+){2,}`), whose
 * backtracking grows exponentially with the input. JavaScript's engine backtracks, and a schema
 * validates request bodies an attacker writes. Alternations of overlapping branches (`(a|a)*`) are
 * not detected: they are rarer, and the request timeout still bounds them.
 */

interface Group {
  /** The group contains a quantifier that repeats (max above 1). */
  repeats: boolean;
}

/** Why `pattern` is refused, or null when it has no repeated repetition. */
export function nestedRepetition(pattern: string): string | null {
  const stack: Group[] = [{ repeats: false }];
  /** The group that just closed, if the previous atom was one. */
  let closed: Group | null = null;
  for (let i = 0; i < pattern.length;) {
    const c = pattern[i]!;
    const quantifier = readQuantifier(pattern, i);
    if (quantifier !== null) {
      if (quantifier.repeats && closed?.repeats) {
        return `it repeats a group that repeats itself (${JSON.stringify(pattern.slice(0, 80))}): matching can take exponential time; rewrite it without nesting quantifiers`;
      }
      if (quantifier.repeats) stack[stack.length - 1]!.repeats = true;
      closed = null;
      i = quantifier.end;
      continue;
    }
    closed = null;
    if (c === '\\') {
      i += 2;
    } else if (c === '[') {
      i = endOfClass(pattern, i);
    } else if (c === '(') {
      stack.push({ repeats: false });
      i++;
    } else if (c === ')' && stack.length > 1) {
      closed = stack.pop()!;
      if (closed.repeats) stack[stack.length - 1]!.repeats = true;
      i++;
    } else {
      i++;
    }
  }
  return null;
}

/** The quantifier starting at `i` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each maybe lazy), or null. */
function readQuantifier(pattern: string, i: number): { repeats: boolean; end: number } | null {
  const c = pattern[i];
  let repeats: boolean;
  let end: number;
  if (c === '*' || c === '+') [repeats, end] = [true, i + 1];
  else if (c === '?') [repeats, end] = [false, i + 1];
  else if (c === '{') {
    const braces = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24));
    if (braces === null) return null;
    const max = braces[2] === undefined ? Number(braces[1]) : braces[3] === '' ? Infinity : Number(braces[3]);
    [repeats, end] = [max > 1, i + braces[0].length];
  } else return null;
  if (pattern[end] === '?') end++;
  return { repeats, end };
}

/** The index after the `]` closing the class that opens at `i`. */
function endOfClass(pattern: string, i: number): number {
  let j = i + 1;
  while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' ? 2 : 1;
  return j + 1;
}
