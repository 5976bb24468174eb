// Hostile API files, each small enough for the upload and api.yaml size limits, each aimed at one
// structural limit of a deploy (src/shared/api-model/input-limits.ts). Each comes with the line of the
// first thing over the limit. (bench/lib/hostile.mjs builds the same kinds for the benchmark.)

export interface Hostile {
  text: string;
  /** The 1-based line the refusal must name. */
  line: number;
}

/** `count` routes in the one map `endpoints`; key number `limit + 1` is on line `limit + 3`. */
export function manyRoutes(key: string, count: number): Hostile & { lineOfKey(index: number): number } {
  const lines = [`key: ${key}`, 'endpoints:'];
  for (let i = 0; i < count; i++) lines.push(`  get /r${i}: { P: { directive: Ping } }`);
  return { text: `${lines.join('\n')}\n`, line: 10_003, lineOfKey: (index) => index + 3 };
}

/** A body of `levels` nested lists on line 4 (flow style: a million `[` fit in 1 MiB). */
export function deepNesting(key: string, levels: number): Hostile {
  const text = [
    `key: ${key}`,
    'endpoints:',
    '  get /x:',
    `    Reply: { directive: ModifyMessage, body: ${'['.repeat(levels)}${']'.repeat(levels)} }`,
    '',
  ].join('\n');
  return { text, line: 4 };
}

/**
 * The billion laughs: each line a list of ten aliases to the list above it, nine levels deep (80
 * aliases, under the alias limit; 10^9 values once expanded). The expansion passes the node limit
 * on the line of `e` (line 11).
 */
export function aliasBomb(key: string): Hostile {
  const names = 'abcdefghi'.split('');
  const lines = [
    `key: ${key}`,
    'endpoints:',
    '  get /x:',
    '    Reply:',
    '      directive: ModifyMessage',
    '      body:',
  ];
  lines.push(`        a: &a [${Array(10).fill('lol').join(', ')}]`);
  for (let i = 1; i < names.length; i++)
    lines.push(
      `        ${names[i]}: &${names[i]} [${Array(10)
        .fill(`*${names[i - 1]}`)
        .join(', ')}]`,
    );
  return { text: `${lines.join('\n')}\n`, line: 11 };
}

/** `count` uses of one anchor, one per line; use number 101 is on line 108. */
export function manyAliases(key: string, count: number): Hostile {
  const lines = [
    `key: ${key}`,
    'endpoints:',
    '  get /x:',
    '    Reply:',
    '      directive: ModifyMessage',
    '      headers: { x-a: &v one }',
    '      body:',
  ];
  for (let i = 0; i < count; i++) lines.push(`        - *v`);
  return { text: `${lines.join('\n')}\n`, line: 108 };
}

/** A JSON object nested `levels` deep, on one line. */
export function deepJson(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

/** A JSON object with `count` keys, one per line: key number 10 001 is on line 10 002. */
export function wideJson(count: number): string {
  const lines = ['{'];
  for (let i = 0; i < count; i++) lines.push(`  "k${i}": ${i}${i < count - 1 ? ',' : ''}`);
  lines.push('}');
  return lines.join('\n');
}

/** A valid JSON file of about `bytes` bytes. */
export function bigJson(bytes: number): string {
  return JSON.stringify({ filler: 'x'.repeat(bytes) });
}
