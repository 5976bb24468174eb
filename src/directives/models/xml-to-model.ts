/**
 * XmlToModel's conversion, in the original's shape: the root element is dropped, attributes go
 * under `@attributes`, repeated elements become lists, empty elements become empty maps, an
 * element with only text becomes that text (text beside elements or attributes goes under
 * `#text`). Values stay strings. No entity is expanded: the five predefined ones and character
 * references are decoded, `&name;` declared in a DOCTYPE stays as written, and an external entity
 * is refused (XXE). Parsed by fast-xml-parser, loaded on first use.
 */
import { createRequire } from 'node:module';
import type { X2jOptions, XMLParser as Parser } from 'fast-xml-parser';

/** XML text XmlToModel takes at most (UTF-8 bytes): 1 MiB, the default request body limit. */
export const XML_MAX_BYTES = 1024 * 1024;

export type XmlResult = { ok: true; value: unknown } | { ok: false; message: string };

type Node = Record<string, unknown>;

const require = createRequire(import.meta.url);
/** Prefixed to every name while parsing, so that no name (`constructor`, `__proto__`) is special to the parser; removed after. */
const MARK = '\u0000';
const parsers = new Map<number, Parser>();

function parserFor(maxDepth: number): Parser {
  let parser = parsers.get(maxDepth);
  if (parser === undefined) {
    const { XMLParser } = require('fast-xml-parser') as typeof import('fast-xml-parser');
    const options: X2jOptions = {
      preserveOrder: true,
      ignoreAttributes: false,
      attributeNamePrefix: '',
      parseTagValue: false,
      parseAttributeValue: false,
      processEntities: false,
      htmlEntities: false,
      ignoreDeclaration: true,
      ignorePiTags: true,
      cdataPropName: '#cdata',
      trimValues: true,
      maxNestedTags: maxDepth,
      transformTagName: (name) => MARK + name,
      transformAttributeName: (name) => MARK + name,
    };
    parser = new XMLParser(options);
    parsers.set(maxDepth, parser);
  }
  return parser;
}

/** Converts XML text; elements nested deeper than `maxDepth` are refused. */
export function xmlToModel(text: string, maxDepth: number): XmlResult {
  const { XMLValidator } = require('fast-xml-parser') as typeof import('fast-xml-parser');
  const checked = XMLValidator.validate(text);
  if (checked !== true) {
    const { msg, line, col } = checked.err;
    return { ok: false, message: `${msg} (line ${line}${col === undefined ? '' : `, column ${col}`})` };
  }
  let nodes: Node[];
  try {
    nodes = parserFor(maxDepth).parse(text) as Node[];
  } catch (error) {
    return { ok: false, message: (error as Error).message.replace(/^\[SECURITY\] /, '').replaceAll(MARK, '') };
  }
  const roots = nodes.filter((node) => elementName(node) !== null);
  if (roots.length !== 1)
    return {
      ok: false,
      message: roots.length === 0 ? 'there is no root element' : `there are ${roots.length} root elements, XML has one`,
    };
  const root = roots[0]!;
  return { ok: true, value: element(root[elementName(root)!] as Node[], root[':@'] as Node | undefined) };
}

function elementName(node: Node): string | null {
  for (const key of Object.keys(node)) if (key.startsWith(MARK)) return key;
  return null;
}

function element(children: Node[], attributes: Node | undefined): unknown {
  let text = '';
  const out: Node = {};
  /** Names of the repeated elements, whose value here is a list. */
  const lists = new Set<string>();
  let hasContent = false;
  if (attributes !== undefined) {
    const list: Node = {};
    for (const [name, value] of Object.entries(attributes)) define(list, unmark(name), decodeReferences(String(value)));
    define(out, '@attributes', list);
    hasContent = true;
  }
  for (const child of children) {
    if (typeof child['#text'] === 'string') {
      text += decodeReferences(child['#text']);
      continue;
    }
    if (Array.isArray(child['#cdata'])) {
      for (const part of child['#cdata'] as Node[]) text += String(part['#text'] ?? '');
      continue;
    }
    const name = elementName(child);
    if (name === null) continue;
    const value = element(child[name] as Node[], child[':@'] as Node | undefined);
    const key = unmark(name);
    if (lists.has(key)) {
      (out[key] as unknown[]).push(value);
    } else if (Object.hasOwn(out, key)) {
      define(out, key, [out[key], value]);
      lists.add(key);
    } else {
      define(out, key, value);
    }
    hasContent = true;
  }
  if (!hasContent) return text === '' ? {} : text;
  if (text !== '') define(out, '#text', text);
  return out;
}

function unmark(name: string): string {
  let i = 0;
  while (name[i] === MARK) i++;
  return name.slice(i);
}

const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** `&lt;` `&gt;` `&amp;` `&quot;` `&apos;`, `&#233;` and `&#xE9;` decoded; any other `&name;` left as written. */
function decodeReferences(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(
    /&(?:#(\d{1,7})|#x([0-9a-fA-F]{1,6})|(lt|gt|amp|quot|apos));/g,
    (whole, dec?: string, hex?: string, name?: string) => {
      if (name !== undefined) return PREDEFINED[name]!;
      const code = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
    },
  );
}

/** An own property whatever the name (`__proto__` included). */
function define(target: Node, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
