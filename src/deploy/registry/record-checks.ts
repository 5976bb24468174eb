import { Errors } from '../../shared/errors.js';
import { API_KEY } from '../api-yaml/api-key.js';

/**
 * Checks of the names and values the registry stores. Each refusal is a RegistryValidationError
 * (ANVIL_ERR_REGISTRY_INVALID) whose `field` names the argument: `name`, `key`, `env`, `path`, and
 * elsewhere `host`, `release`, `digest`, `keep`.
 */

const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const ENV = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const PLATFORM_SEGMENT = 'anvil';
/** Sent in a header: printable ASCII, no spaces. */
const HOST_KEY = /^[\x21-\x7e]{16,512}$/;

/** The host name in lower case. */
export function checkHostName(name: unknown): string {
  if (typeof name !== 'string') throw Errors.registryInvalid('name', 'must be a string');
  const n = name.toLowerCase();
  if (n.length === 0 || n.length > 253 || !n.split('.').every((label) => HOST_LABEL.test(label))) {
    throw Errors.registryInvalid(
      'name',
      `"${name}" is not a valid host name (letters, digits, dots and hyphens; labels of 1-63 characters not starting or ending with a hyphen; at most 253 characters; no port)`,
    );
  }
  return n;
}

export function checkHostKey(key: unknown): string {
  if (typeof key !== 'string' || !HOST_KEY.test(key)) {
    throw Errors.registryInvalid('key', 'must be 16 to 512 printable ASCII characters without spaces');
  }
  return key;
}

export function checkEnv(env: unknown): string {
  if (typeof env !== 'string' || !ENV.test(env)) {
    throw Errors.registryInvalid('env', `${JSON.stringify(env)} must match ${ENV.source}`);
  }
  return env;
}

export function checkApiKey(key: unknown): string {
  if (typeof key !== 'string' || !API_KEY.test(key) || key === PLATFORM_SEGMENT) {
    throw Errors.registryInvalid(
      'key',
      `${JSON.stringify(key)} is not a valid API key (${API_KEY.source}, not "${PLATFORM_SEGMENT}")`,
    );
  }
  return key;
}

/** A public host's path: null (API key in the URL) or `/<api-key>` (one API at the root). */
export function checkPath(path: unknown): string | null {
  if (path === null) return null;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw Errors.registryInvalid('path', 'must be null or "/<api-key>"');
  }
  try {
    checkApiKey(path.slice(1));
  } catch {
    throw Errors.registryInvalid('path', `${JSON.stringify(path)} must be null or "/<api-key>" with a valid API key`);
  }
  return path;
}
