import type { ApiRuntime, RequestFacts } from './context.js';

/** The memory keys every request starts with (SPEC §5), in an object without a prototype (Memory takes it as it is). */
export function systemMemory(api: ApiRuntime, request: RequestFacts): Record<string, unknown> {
  return {
    __proto__: null,
    'anvil-api': api.key,
    'anvil-env': api.env,
    'anvil-host': api.host,
    'anvil-release': api.release,
    'anvil-localhost': api.localBaseUrl,
    'anvil-definitionVerb': request.definitionVerb,
    'anvil-definitionPath': request.definitionPath,
    ip: request.ip,
    correlationId: request.id,
  };
}

/**
 * The original's system keys, read as the `anvil-*` key they name, so its API files and ported
 * directives run unchanged (`host: $.memory.hefesto-localhost` takes the bus). The two paths are
 * virtual: the original held host folders there, and a real path would tell a tenant how the
 * instance is laid out. `/code/` is the release's folder (its `Assets/` is ServeStatic's root),
 * `/storage/` the API's storage folder (ServeStatic `storage: true`).
 */
const ORIGINAL_KEYS: Readonly<Record<string, { key: string; upper?: true } | { value: string }>> = {
  'hefesto-localhost': { key: 'anvil-localhost' },
  'hefesto-org': { key: 'anvil-host' },
  'hefesto-env': { key: 'anvil-env' },
  'hefesto-api': { key: 'anvil-api' },
  'hefesto-definitionpath': { key: 'anvil-definitionPath' },
  // The original's verb was upper-case (`GET`); Anvil's is the endpoint's as written (`get`).
  'hefesto-definitionverb': { key: 'anvil-definitionVerb', upper: true },
  'hefesto-pathcode': { value: '/code/' },
  'hefesto-pathstorage': { value: '/storage/' },
};

/**
 * What memory reads for a top-level key nobody set: one of the original's system keys (read
 * through, never stored, so a request carries nothing more), else undefined.
 */
export function originalSystemKey(data: Readonly<Record<string, unknown>>, key: string): unknown {
  const alias = Object.hasOwn(ORIGINAL_KEYS, key) ? ORIGINAL_KEYS[key] : undefined;
  if (alias === undefined) return undefined;
  if ('value' in alias) return alias.value;
  const value = data[alias.key];
  return alias.upper === true && typeof value === 'string' ? value.toUpperCase() : value;
}
