/**
 * The alias grammar of SPEC §5: any parameter string starting with `$.` names a value resolved
 * when the entry runs. Parsed once (at deploy time for errors, at actor start for resolvers).
 */
export type AliasRef =
  | { kind: 'pathParam'; name: string }
  | { kind: 'header'; name: string }
  | { kind: 'query'; name: string }
  /** `$.message.body` (the raw text) or a field of the JSON body; `whole`: `$.message.bodyAsArray`, the parsed body. */
  | { kind: 'body'; path: string[]; whole?: true }
  | { kind: 'verb' }
  | { kind: 'path' }
  | { kind: 'status' }
  | { kind: 'map'; name: string; path: string[] }
  | { kind: 'memory'; path: string[] }
  | { kind: 'id' };

export const ALIAS_FORMS = [
  '$.message.pathParam.<name>',
  '$.message.pathParams.<name>',
  '$.message.header.<name>',
  '$.message.query.<name>',
  '$.message.queryParam.<name>',
  '$.message.body',
  '$.message.body.<field>…',
  '$.message.bodyAsArray',
  '$.message.bodyAsArray.<field>…',
  '$.message.verb',
  '$.message.path',
  '$.message.status',
  '$.map.<map>',
  '$.map.<map>.<field>…',
  '$.memory.<key>…',
  '$.id',
];

export function isAlias(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('$.');
}

export type AliasParse = { ok: true; ref: AliasRef } | { ok: false; error: string };

export function parseAlias(text: string): AliasParse {
  const unknown = (): AliasParse => ({
    ok: false,
    error: `alias "${text}" is not of a known form (${ALIAS_FORMS.join(', ')})`,
  });
  if (!text.startsWith('$.')) return unknown();
  const rest = text.slice(2);
  if (rest === 'id') return { ok: true, ref: { kind: 'id' } };

  const [root, ...tail] = rest.split('.');
  if (tail.some((part) => part === '')) return { ok: false, error: `alias "${text}" has an empty segment` };

  if (root === 'memory') {
    if (tail.length === 0) return { ok: false, error: `alias "${text}" needs a memory key, as in $.memory.<key>` };
    return { ok: true, ref: { kind: 'memory', path: tail } };
  }
  if (root === 'map') {
    const [name, ...path] = tail;
    if (name === undefined) return { ok: false, error: `alias "${text}" needs a map name, as in $.map.<map>` };
    return { ok: true, ref: { kind: 'map', name, path } };
  }
  if (root !== 'message' || tail.length === 0) return unknown();

  const [field, ...sub] = tail;
  const name = sub.join('.');
  switch (field) {
    case 'verb':
    case 'path':
    case 'status':
      return sub.length === 0 ? { ok: true, ref: { kind: field } } : unknown();
    case 'body':
      return { ok: true, ref: { kind: 'body', path: sub } };
    // The original's name for the parsed body: the whole of it, or a field as `body.<field>` reads.
    case 'bodyAsArray':
      return {
        ok: true,
        ref: sub.length === 0 ? { kind: 'body', path: sub, whole: true } : { kind: 'body', path: sub },
      };
    case 'pathParam':
    case 'pathParams':
      return sub.length > 0 ? { ok: true, ref: { kind: 'pathParam', name } } : unknown();
    case 'header':
      return sub.length > 0 ? { ok: true, ref: { kind: 'header', name: name.toLowerCase() } } : unknown();
    case 'query':
    case 'queryParam':
      return sub.length > 0 ? { ok: true, ref: { kind: 'query', name } } : unknown();
    default:
      return unknown();
  }
}

/** Every alias string inside a parameter value, with the path to it (keys and list indexes). */
export function findAliases(
  value: unknown,
  path: Array<string | number> = [],
): Array<{ path: Array<string | number>; text: string }> {
  if (isAlias(value)) return [{ path, text: value }];
  if (Array.isArray(value)) return value.flatMap((item, i) => findAliases(item, [...path, i]));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => findAliases(v, [...path, k]));
  }
  return [];
}
