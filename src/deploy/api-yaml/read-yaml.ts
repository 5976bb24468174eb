/**
 * Reads a YAML file into plain data in steps that each cost time linear in its size, checking the
 * structural limits first: tokens (yaml's parser, stopped at the first level too deep), their shape (depth, keys per map, nodes,
 * aliases: yaml-shape.ts), the document (yaml's composer, safe once the depth is known), then
 * plain data with aliases expanded under the same limits (yaml-to-data.ts).
 */
import { Composer, LineCounter, YAMLParseError, type CST, type Document } from 'yaml';
import type { YamlLimits } from '../../shared/api-model/input-limits.js';
import { checkYamlShape, parseTokens } from './yaml-shape.js';
import { yamlToData } from './yaml-to-data.js';
import { tagPlaces } from './yaml-tags.js';
import { pathAtOffset, type NodeIndex, type PathKey } from './yaml-positions.js';

export interface YamlProblem {
  offset: number;
  path: PathKey[];
  message: string;
  /** A key that repeats an earlier key of its map (the only problem that leaves usable data). */
  duplicate?: true;
}

export type YamlReading =
  | { ok: true; doc: Document; lineCounter: LineCounter; index: NodeIndex; data: unknown; problems: YamlProblem[] }
  | { ok: false; lineCounter: LineCounter; problems: YamlProblem[] };

/** Syntax errors past the first few are mostly echoes of the first; these are enough to fix it. */
const MAX_SYNTAX_ERRORS = 20;

/**
 * `ok` when the file could be read into data: `problems` then only holds duplicate keys (the last
 * value wins in `data`). Otherwise the problems say why not.
 */
export function readYaml(text: string, limits: YamlLimits): YamlReading {
  const lineCounter = new LineCounter();
  const parsed = parseTokens(text, lineCounter, limits);
  if (!parsed.ok)
    return {
      ok: false,
      lineCounter,
      problems: [{ offset: parsed.problem.offset, path: [], message: parsed.problem.message }],
    };
  const tokens = parsed.tokens;

  const shape = checkYamlShape(tokens, limits);
  if (shape !== null)
    return { ok: false, lineCounter, problems: [{ offset: shape.offset, path: [], message: shape.message }] };

  const doc = composeOne(tokens, text.length);
  if (doc.errors.length > 0) {
    const problems = doc.errors
      .slice(0, MAX_SYNTAX_ERRORS)
      .map((e) => ({ offset: e.pos[0], path: pathAtOffset(doc, e.pos[0]), message: e.message }));
    return { ok: false, lineCounter, problems };
  }

  const converted = yamlToData(doc, limits, tagPlaces(tokens));
  const problems = converted.problems.map(({ offset, path, message, fatal }): YamlProblem =>
    fatal ? { offset, path, message } : { offset, path, message, duplicate: true },
  );
  if (converted.problems.some((p) => p.fatal)) return { ok: false, lineCounter, problems };
  return { ok: true, doc, lineCounter, index: converted.index, data: converted.data, problems };
}

/** The first document of the tokens; a second one is an error, as with yaml's parseDocument. */
function composeOne(tokens: readonly CST.Token[], end: number): Document {
  // uniqueKeys: false — yaml's check compares each key with every earlier one; yaml-to-data.ts
  // finds duplicates with a set. The core schema, always: a `%YAML 1.1` line must not turn on merge
  // keys (`<<`), binary or timestamps.
  const composer = new Composer({ uniqueKeys: false, prettyErrors: false, schema: 'core', merge: false });
  let first: Document | null = null;
  for (const doc of composer.compose(tokens, true, end)) {
    if (first !== null) {
      first.errors.push(
        new YAMLParseError(
          [doc.range[0], doc.range[1]],
          'MULTIPLE_DOCS',
          'a second YAML document starts here: the file must hold one',
        ),
      );
      break;
    }
    first = doc;
  }
  return first!;
}
