/**
 * The first structural checks of a YAML file, before any document is built. While yaml's parser
 * reads it into tokens (CST), the collections it holds open are counted: 400 000 nested `[` took
 * more than 256 MiB of tokens, so a file is refused at the first level too deep. Then one walk over
 * the tokens checks the depth again, keys per map, nodes and aliases. (yaml's document builder
 * recurses once per level of nesting: a file of a million `[` would overflow its stack; this walk
 * keeps its own stack and visits each token once.)
 */
import { Lexer, Parser, type CST, type LineCounter } from 'yaml';
import type { YamlLimits } from '../../shared/api-model/input-limits.js';

/** A limit the file crossed: where (a character offset) and which. */
export interface ShapeProblem {
  offset: number;
  message: string;
}

type Item = CST.CollectionItem;

const deeperThan = (limit: number) => `maps and lists nested deeper than ${limit} levels: the limit is ${limit}`;

/** The tokens of `text`, read with yaml's parser, or the place where the nesting passed the limit. */
export function parseTokens(
  text: string,
  lineCounter: LineCounter,
  limits: YamlLimits,
): { ok: true; tokens: CST.Token[] } | { ok: false; problem: ShapeProblem } {
  const parser = new Parser(lineCounter.addNewLine);
  const tokens: CST.Token[] = [];
  lineCounter.addNewLine(0);
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    // The stack holds the document, the open collections and at most one other token per level:
    // counting the collections is needed only once it is long, and costs at most twice the limit.
    if (parser.stack.length > limits.maxDepth) {
      const open = parser.stack.filter(isCollection);
      if (open.length > limits.maxDepth)
        return { ok: false, problem: { offset: open[limits.maxDepth]!.offset, message: deeperThan(limits.maxDepth) } };
    }
  }
  for (const token of parser.end()) tokens.push(token);
  return { ok: true, tokens };
}

/** Checks every document of `tokens` against `limits`; the first problem in document order, or null. */
export function checkYamlShape(tokens: readonly CST.Token[], limits: YamlLimits): ShapeProblem | null {
  let nodes = 0;
  let aliases = 0;
  // Depth-first, children pushed in reverse: tokens come off the stack in document order.
  const stack: Array<{ token: CST.Token; depth: number }> = [];
  for (let i = tokens.length - 1; i >= 0; i--) stack.push({ token: tokens[i]!, depth: 0 });

  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { token, depth } = next;
    switch (token.type) {
      case 'document':
        if (token.value !== undefined) stack.push({ token: token.value, depth });
        continue;
      case 'alias':
        if (++aliases > limits.maxAliases) {
          return {
            offset: token.offset,
            message: `more than ${limits.maxAliases} aliases (*name) in the file: the limit is ${limits.maxAliases}`,
          };
        }
        break;
      case 'scalar':
      case 'single-quoted-scalar':
      case 'double-quoted-scalar':
      case 'block-scalar':
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection': {
        if (depth + 1 > limits.maxDepth) return { offset: token.offset, message: deeperThan(limits.maxDepth) };
        const items: readonly Item[] = token.items;
        if (isMap(token) && items.length > limits.maxKeysPerMap) {
          const extra = items[limits.maxKeysPerMap]!;
          return {
            offset: itemOffset(extra, token.offset),
            message: `more than ${limits.maxKeysPerMap} keys in one map: the limit is ${limits.maxKeysPerMap} keys per map`,
          };
        }
        for (let i = items.length - 1; i >= 0; i--) {
          const item = items[i]!;
          if (item.value) stack.push({ token: item.value, depth: depth + 1 });
          if (item.key) stack.push({ token: item.key, depth: depth + 1 });
        }
        break;
      }
      default:
        continue; // comments, directives, document ends, errors (reported by the parser)
    }
    if (++nodes > limits.maxNodes) {
      return {
        offset: token.offset,
        message: `more than ${limits.maxNodes} YAML nodes (keys, values, maps and lists): the limit is ${limits.maxNodes}`,
      };
    }
  }
  return null;
}

function isCollection(token: CST.Token): token is CST.BlockMap | CST.BlockSequence | CST.FlowCollection {
  return token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection';
}

function isMap(token: CST.BlockMap | CST.BlockSequence | CST.FlowCollection): boolean {
  return token.type === 'block-map' || (token.type === 'flow-collection' && token.start.source === '{');
}

/** Where an item starts: its key, else its value, else its first indicator. */
function itemOffset(item: Item, fallback: number): number {
  return item.key?.offset ?? item.start[0]?.offset ?? item.value?.offset ?? fallback;
}
