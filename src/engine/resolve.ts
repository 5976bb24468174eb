import { parseAlias, type AliasRef, isAlias } from '../shared/api-model/aliases.js';
import { getPath, type Memory } from './memory.js';
import type { Message } from './message.js';

/** What an alias can read when an entry runs. */
export interface ResolveScope {
  readonly id: string;
  readonly message: Message;
  readonly memory: Memory;
  readonly maps: Readonly<Record<string, unknown>>;
  readonly pathParams: Readonly<Record<string, string>>;
}

export type Resolver = (scope: ResolveScope) => unknown;

/**
 * A parameter value compiled once, when the actor starts: static values are frozen and returned as
 * they are; values holding aliases become a function that builds a fresh value per request.
 */
export type CompiledValue = { isStatic: true; value: unknown } | { isStatic: false; resolve: Resolver };

export function compileValue(value: unknown): CompiledValue {
  if (isAlias(value)) return { isStatic: false, resolve: compileAlias(value) };
  if (Array.isArray(value)) {
    const items = value.map(compileValue);
    if (items.every((item) => item.isStatic)) return { isStatic: true, value: deepFreeze(value) };
    const resolvers = items.map(asResolver);
    return { isStatic: false, resolve: (scope) => resolvers.map((r) => r(scope)) };
  }
  if (value !== null && typeof value === 'object') {
    const fields = Object.entries(value).map(([k, v]) => [k, compileValue(v)] as const);
    if (fields.every(([, f]) => f.isStatic)) return { isStatic: true, value: deepFreeze(value) };
    const resolvers = fields.map(([k, f]) => [k, asResolver(f)] as const);
    return {
      isStatic: false,
      resolve: (scope) => {
        const out: Record<string, unknown> = {};
        for (const [k, r] of resolvers) out[k] = r(scope);
        return out;
      },
    };
  }
  return { isStatic: true, value };
}

function asResolver(value: CompiledValue): Resolver {
  if (value.isStatic) {
    const constant = value.value;
    return () => constant;
  }
  return value.resolve;
}

export function compileAlias(text: string): Resolver {
  const parsed = parseAlias(text);
  // Deploy-time validation refuses unknown forms; a release that still has one resolves it to null.
  if (!parsed.ok) return () => null;
  return resolverFor(parsed.ref);
}

function resolverFor(ref: AliasRef): Resolver {
  switch (ref.kind) {
    case 'id':
      return (s) => s.id;
    case 'verb':
      return (s) => s.message.verb;
    case 'path':
      return (s) => s.message.path;
    case 'status':
      return (s) => s.message.status;
    case 'pathParam': {
      const name = ref.name;
      return (s) => (Object.hasOwn(s.pathParams, name) ? s.pathParams[name] : null);
    }
    case 'header': {
      const name = ref.name;
      return (s) => s.message.header(name);
    }
    case 'query': {
      const name = ref.name;
      return (s) => {
        const query = s.message.query;
        return Object.hasOwn(query, name) ? query[name] : null;
      };
    }
    case 'body': {
      const path = ref.path;
      if (ref.whole === true) return (s) => s.message.bodyJson();
      if (path.length === 0) return (s) => s.message.bodyText();
      return (s) => getPath(s.message.bodyJson(), path);
    }
    case 'map': {
      const { name, path } = ref;
      return (s) => (Object.hasOwn(s.maps, name) ? getPath(s.maps[name], path) : null);
    }
    case 'memory': {
      const path = ref.path;
      return (s) => s.memory.get(path);
    }
  }
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
