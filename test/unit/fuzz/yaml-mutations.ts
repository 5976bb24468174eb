import fc from 'fast-check';

// Mutations of a YAML text, line by line: what a careless edit, a hostile author or a broken tool
// does to a valid api.yaml. Indexes are drawn as naturals and taken modulo the current line count.

type Mutation = (lines: string[]) => void;

const at = (lines: readonly string[], n: number) => (lines.length === 0 ? 0 : n % lines.length);

/** Odd scalars: huge and tiny numbers, YAML 1.1 spellings, tags, special floats, aliases-looking strings. */
const oddScalar = fc.constantFrom(
  '99999999999999999999999999999999999999',
  '-9223372036854775809',
  '1e309',
  '-1e-400',
  '.inf',
  '-.Inf',
  '.nan',
  '0x7fffffffffffffff',
  '0o777',
  '0b101',
  '1_000',
  '-0',
  '~',
  'null',
  'yes',
  'off',
  '!!binary aGVsbG8=',
  '!!timestamp 2001-12-14',
  '!custom x',
  '!!str 1',
  '!!map {}',
  '!<tag:yaml.org,2002:int> 1',
  '"\\u0000"',
  '"\\uD800"',
  "'\u2028'",
  '$.message.body.__proto__',
  '$.memory.constructor.prototype',
  '$.map.__proto__.x',
  '$.',
  '$..',
  '{}',
  '[]',
  '*undefinedAlias',
  '&anchor',
  '|',
  '>-',
  '? complex',
  '<<: *a',
);

const unicode = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
const indentation = fc.oneof(
  fc.integer({ min: 0, max: 24 }).map((n) => ' '.repeat(n)),
  fc.constantFrom('\t', ' \t', '\u00a0', '\u3000'),
);

/** A deep structure in flow or block style, sometimes deeper than the depth limit. */
const deepValue = fc
  .tuple(fc.integer({ min: 1, max: 300 }), fc.constantFrom('[', '{a: ', 'block'))
  .map(([depth, style]) => {
    if (style === '[') return `${'['.repeat(depth)}${']'.repeat(depth)}`;
    if (style === '{a: ') return `${'{a: '.repeat(depth)}1${'}'.repeat(depth)}`;
    return `\n${Array.from({ length: depth }, (_, i) => `${' '.repeat(2 * (i + 1))}k${i}:`).join('\n')} x`;
  });

/** The billion laughs, with a random width and depth (some under the alias limit, some over it). */
const laughs = fc.tuple(fc.integer({ min: 2, max: 12 }), fc.integer({ min: 2, max: 12 })).map(([width, depth]) => {
  const lines = [`l0: &l0 [${Array(width).fill('lol').join(', ')}]`];
  for (let i = 1; i < depth; i++)
    lines.push(
      `l${i}: &l${i} [${Array(width)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  return lines;
});

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat().map(
    (i): Mutation =>
      (lines) =>
        void lines.splice(at(lines, i), 1),
  ),
  fc.nat().map(
    (i): Mutation =>
      (lines) =>
        void lines.splice(at(lines, i), 0, lines[at(lines, i)] ?? ''),
  ),
  fc.tuple(fc.nat(), fc.nat()).map(([i, j]): Mutation => (lines) => {
    const a = at(lines, i);
    const b = at(lines, j);
    [lines[a], lines[b]] = [lines[b] ?? '', lines[a] ?? ''];
  }),
  fc.tuple(fc.nat(), indentation).map(([i, indent]): Mutation => (lines) => {
    const k = at(lines, i);
    lines[k] = indent + (lines[k] ?? '').trimStart();
  }),
  fc.tuple(fc.nat(), fc.nat(), unicode).map(([i, j, text]): Mutation => (lines) => {
    const k = at(lines, i);
    const line = lines[k] ?? '';
    const cut = line.length === 0 ? 0 : j % (line.length + 1);
    lines[k] = line.slice(0, cut) + text + line.slice(cut);
  }),
  fc.tuple(fc.nat(), fc.oneof(oddScalar, deepValue)).map(([i, value]): Mutation => (lines) => {
    // Replaces the value after the line's first ": " (or appends one).
    const k = at(lines, i);
    const line = lines[k] ?? '';
    const colon = line.indexOf(': ');
    lines[k] = colon < 0 ? `${line}: ${value}` : `${line.slice(0, colon + 2)}${value}`;
  }),
  fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('a', 'x', 'lol')).map(([i, j, name]): Mutation => (lines) => {
    // An anchor on one value, an alias to it on another (maybe before it, maybe inside it).
    const a = at(lines, i);
    const b = at(lines, j);
    lines[a] = (lines[a] ?? '').replace(': ', `: &${name} `);
    lines[b] = (lines[b] ?? '').replace(/: .*$/, `: *${name}`);
  }),
  fc.tuple(fc.nat(), laughs).map(([i, bomb]): Mutation => (lines) => {
    const k = at(lines, i);
    const indent = /^\s*/.exec(lines[k] ?? '')![0];
    lines.splice(k, 0, ...bomb.map((l) => indent + l));
  }),
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom(
        '---',
        '...',
        '%YAML 1.1',
        '%YAML 9.9',
        '%TAG ! tag:x,2000:',
        '--- |',
        '? [a, b]',
        ': x',
        '- -',
        '#',
        '&a',
        '*a',
        '"',
        "'",
        '{',
        ']',
        '\u0000',
        '\ufeff',
        '\r',
        '\u0085',
      ),
    )
    .map(
      ([i, line]): Mutation =>
        (lines) =>
          void lines.splice(at(lines, i), 0, line),
    ),
);

/** `base` with 1 to 8 mutations applied, joined with `\n` or `\r\n`. */
export function mutatedYaml(base: string): fc.Arbitrary<string> {
  return fc.tuple(fc.array(mutation, { minLength: 1, maxLength: 8 }), fc.boolean()).map(([mutations, crlf]) => {
    const lines = base.split('\n');
    for (const mutate of mutations) mutate(lines);
    return lines.join(crlf ? '\r\n' : '\n');
  });
}

/** Token soup: YAML's indicators, keys of api.yaml, directive names and odd scalars, in random order. */
export const yamlSoup: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        ':',
        ': ',
        '- ',
        '? ',
        '{',
        '}',
        '[',
        ']',
        ',',
        '&a ',
        '*a',
        '!',
        '!!',
        '|',
        '>',
        '#',
        '%',
        '@',
        '`',
        '"',
        "'",
        '\n',
        '\n  ',
        '\n    ',
        '\t',
        ' ',
      ),
      fc.constantFrom(
        'key',
        'endpoints',
        'before',
        'after',
        'limits',
        'debug',
        'directive',
        'groups',
        'get /x',
        'all /requests',
        'post /u/{id}',
        'Ping',
        'ModifyMessage',
        'ThrowError',
        'ExecuteIf',
        'execute',
      ),
      oddScalar,
      unicode,
    ),
    { maxLength: 80 },
  )
  .map((parts) => parts.join(''));
